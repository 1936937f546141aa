// The recovery-codes card of the Account view (decisions §14): make ten one-time codes, shown only
// this once, with Copy and Download (.txt). Once the account has a passkey the service asks for a
// passkey sign-in first (a 403 with next_step, which report() turns into that offer).
import { api } from '../api.ts';
import { run } from '../actions.ts';
import { byId, el } from '../dom.ts';
import { reload } from '../loaders.ts';
import { show } from '../message.ts';
import { session } from '../session.ts';

let shown: string[] = [];

const fileText = (codes: readonly string[]): string =>
  [
    `Mandate recovery codes for ${session.email}`,
    `Made ${new Date().toISOString().slice(0, 10)}. Each code works once; making new ones voids these.`,
    'With your verified phone, one of them lets you back in if you lose every passkey (sign-in page, "Lost your passkey?").',
    '',
    ...codes.map((c, i) => `${String(i + 1).padStart(2, ' ')}. ${c}`),
    '',
  ].join('\n');

export function setUpRecoveryCodes(): void {
  const make = byId('recovery-make', HTMLButtonElement);
  const errorNode = byId('recovery-error', HTMLElement);
  make.addEventListener('click', () => void run(make, 'Making codes…', async () => {
    const { codes } = await api<{ codes: string[] }>('POST', '/api/recovery/codes', {});
    shown = codes;
    byId('recovery-codes-list', HTMLElement).replaceChildren(...codes.map((c) => el('li', { text: c })));
    byId('recovery-codes-shown', HTMLElement).hidden = false;
    make.textContent = 'Make new codes';
    show('New recovery codes made: save them now. Older codes no longer work.', 'ok');
    await reload('activity');
  }, { errorNode }));

  const copy = byId('recovery-copy', HTMLButtonElement);
  copy.addEventListener('click', () => void run(copy, 'Copying…', async () => {
    await navigator.clipboard.writeText(fileText(shown));
    show('Recovery codes copied. Paste them somewhere safe, away from this device.', 'ok');
  }, { errorNode }));

  byId('recovery-download', HTMLButtonElement).addEventListener('click', () => {
    const url = URL.createObjectURL(new Blob([fileText(shown)], { type: 'text/plain' }));
    const a = el('a', { href: url, download: 'mandate-recovery-codes.txt' });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  });
}

export function resetRecoveryCodes(): void {
  shown = [];
  byId('recovery-codes-list', HTMLElement).replaceChildren();
  byId('recovery-codes-shown', HTMLElement).hidden = true;
  byId('recovery-error', HTMLElement).hidden = true;
  byId('recovery-make', HTMLButtonElement).textContent = 'Make recovery codes';
}
