// "Approve with <label>" on an access request's card, for each identity provider linked to the
// owner (decisions §15): the service answers the provider's sign-in address, where the owner signs
// in again; the provider sends the browser back and the request is approved as asked, with the
// card's limits. A provider cannot narrow what is asked, nor approve step-ups: those take a passkey.
import { api, seg, userError } from '../api.ts';
import { report } from '../actions.ts';
import { button, el } from '../dom.ts';
import type { PendingRequest } from '../types.ts';
import { linkedProviders, onProvidersChanged } from './identity-providers.ts';
import { readChoices } from './request-choices.ts';

const rows = new Set<{ p: PendingRequest; row: HTMLElement; card: HTMLElement; errorNode: HTMLElement }>();
onProvidersChanged(() => {
  for (const r of rows) {
    if (!r.card.isConnected) rows.delete(r);
    else fill(r);
  }
});

/** The buttons' row for a card, or null for a request a provider cannot approve. */
export function providerApproveRow(p: PendingRequest, card: HTMLElement, errorNode: HTMLElement): HTMLElement | null {
  if (p.kind !== 'initial') return null;
  const entry = { p, row: el('div', { className: 'row actions idp-approve' }), card, errorNode };
  rows.add(entry);
  fill(entry);
  return entry.row;
}

function fill(r: { p: PendingRequest; row: HTMLElement; card: HTMLElement; errorNode: HTMLElement }): void {
  const linked = linkedProviders();
  r.row.hidden = linked.length === 0;
  r.row.replaceChildren(...linked.map((provider) => {
    const b = button(`Approve with ${provider.label}`, 'secondary idp-approve-button', { 'data-provider': provider.name });
    b.addEventListener('click', () => void approveWith(r, provider.name, provider.label, b));
    return b;
  }));
}

async function approveWith(r: { p: PendingRequest; card: HTMLElement; errorNode: HTMLElement }, name: string, label: string, pressed: HTMLButtonElement): Promise<void> {
  r.errorNode.hidden = true;
  try {
    const choices = readChoices(r.card, r.p.sign_in ? r.p.scopes : undefined);
    const narrowed = choices.scopes.length !== r.p.scopes.length || choices.user_info.length !== r.p.user_info.length;
    if (narrowed) throw userError(`Approve with ${label} approves what was asked as it stands. To allow less, approve with your passkey.`);
    pressed.disabled = true;
    pressed.textContent = `Opening ${label}…`;
    const { redirect } = await api<{ redirect: string }>('POST', `/api/txn/${seg(r.p.id)}/oauth/${seg(name)}`, choices.limits ?? null);
    location.assign(redirect);
  } catch (e) {
    pressed.disabled = false;
    pressed.textContent = `Approve with ${label}`;
    await report(e, r.errorNode);
  }
}
