// The owner's devices on the Account view: passkeys (sign in and approve), browsers with
// notifications on and Android apps (they notify). Any of them can be removed; removing a passkey
// needs a passkey sign-in (the server says so, and the app offers it).
import { api, seg } from '../api.ts';
import { confirmInline, run } from '../actions.ts';
import { button, byId, el } from '../dom.ts';
import { when } from '../format.ts';
import { reload } from '../loaders.ts';
import { show } from '../message.ts';
import { forgetHere, isThisBrowser } from '../push.ts';
import { forgetPasskeyHere } from '../device.ts';
import { hooks, session } from '../session.ts';
import type { Device } from '../types.ts';
import { showPushState } from './push-section.ts';

const KIND_LABELS: Record<string, string> = { passkey: 'Passkey', webpush: 'Browser notifications', fcm: 'Android app' };

const removeQuestion = (d: Device): string => {
  if (d.kind === 'passkey') return `Remove the passkey "${d.name}"? It can no longer sign in or approve.`;
  return `Remove "${d.name}"? It no longer gets notifications from Mandate.`;
};

const removedText = (d: Device): string => (d.kind === 'passkey' ? `Passkey "${d.name}" removed.` : `"${d.name}" removed: it gets no more notifications.`);

function deviceItem(d: Device): HTMLElement {
  const here = isThisBrowser(d);
  const remove = button('Remove', 'danger', { 'aria-label': `Remove ${d.name}` });
  const actions = el('div', { className: 'row' }, remove);
  const item = el('li', { 'data-device': d.id, 'data-kind': d.kind },
    el('div', {},
      el('strong', { text: d.name }),
      el('span', { className: `device-kind ${d.kind}`, text: `${KIND_LABELS[d.kind] ?? d.kind}${here ? ' · this browser' : ''}` }),
      el('span', { className: 'meta', text: `added ${when(d.created_at)} · last used ${when(d.last_used_at)}` }),
      ...(d.paused_until ? [el('span', { className: 'meta warn', text: `Its notifications kept failing: tried again after ${when(d.paused_until)}. If it stays so, remove it and turn notifications on again on that device.` })] : [])),
    actions);
  remove.addEventListener('click', async () => {
    if (!(await confirmInline(actions, removeQuestion(d), 'Remove'))) return;
    await run(remove, 'Removing…', async () => {
      await api('DELETE', `/api/devices/${seg(d.id)}`);
      if (here) await forgetHere();
      show(removedText(d), 'ok');
      await reload('devices', 'activity');
    });
  });
  return item;
}

export async function loadDevices(): Promise<void> {
  const devices = await api<Device[]>('GET', '/api/devices');
  const passkeys = devices.filter((d) => d.kind === 'passkey').length;
  session.passkeys = passkeys;
  const list = byId('devices', HTMLElement);
  list.replaceChildren(...(devices.length
    ? devices.map(deviceItem)
    : [el('li', { className: 'empty', text: 'No passkeys yet. Add one to sign in without a password and to approve requests.' })]));
  byId('passkey-add-button', HTMLButtonElement).textContent = passkeys ? 'Add another passkey' : 'Add a passkey';
  byId('passkey-setup', HTMLElement).hidden = passkeys > 0;
  if (passkeys === 0) forgetPasskeyHere(session.userId);
  hooks.passkeysChanged();
  await showPushState(devices);
}
