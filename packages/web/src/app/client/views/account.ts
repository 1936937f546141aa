// "Account": who is signed in, the passkeys (devices) that approve, adding and removing them, and
// signing out. Once the owner has a passkey, changing passkeys needs a passkey sign-in: a password
// alone must not let someone add their own.
import { api, seg } from '../api.ts';
import { confirmInline, run } from '../actions.ts';
import { button, byId, el } from '../dom.ts';
import { when } from '../format.ts';
import { reload } from '../loaders.ts';
import { show } from '../message.ts';
import { session } from '../session.ts';
import type { Device, Me } from '../types.ts';
import { passkeySignIn, registerPasskey } from '../webauthn.ts';
import { showPasskeyNotices } from './requests.ts';

function deviceItem(d: Device): HTMLElement {
  const remove = button('Remove', 'danger', { 'aria-label': `Remove ${d.name}` });
  const actions = el('div', { className: 'row' }, remove);
  const item = el('li', { 'data-device': d.id },
    el('div', {}, el('strong', { text: d.name }), el('span', { className: 'meta', text: `added ${when(d.created_at)} · last used ${when(d.last_used_at)}` })),
    actions);
  remove.addEventListener('click', async () => {
    if (!(await confirmInline(actions, `Remove the passkey "${d.name}"? It can no longer sign in or approve.`, 'Remove'))) return;
    await run(remove, 'Removing…', async () => {
      await api('DELETE', `/api/devices/${seg(d.id)}`);
      show(`Passkey "${d.name}" removed.`, 'ok');
      await reload('devices', 'activity');
    });
  });
  return item;
}

export async function loadDevices(): Promise<void> {
  const devices = await api<Device[]>('GET', '/api/devices');
  session.passkeys = devices.length;
  const list = byId('devices', HTMLElement);
  list.replaceChildren(...(devices.length
    ? devices.map(deviceItem)
    : [el('li', { className: 'empty', text: 'No passkeys yet. Add one to sign in without a password and to approve requests.' })]));
  byId('passkey-add-button', HTMLButtonElement).textContent = devices.length ? 'Add another passkey' : 'Add a passkey';
  byId('passkey-setup', HTMLElement).hidden = devices.length > 0;
  showPasskeyNotices();
}

export function showWhoami(me: Me): void {
  byId('whoami-name', HTMLElement).replaceChildren(el('span', { text: me.display_name }), el('span', { className: 'whoami-email', text: me.email }));
}

/** Shown when adding or removing a passkey needs a passkey sign-in (the owner signed in with a password). */
export function askForPasskeySession(): void {
  show('To add or remove passkeys, sign in with one of your passkeys first.', 'error');
  const box = byId('passkey-reauth', HTMLElement);
  box.hidden = false;
  box.scrollIntoView({ block: 'nearest' });
}

export function setUpAccount(signOut: () => Promise<void>): void {
  const reauth = byId('passkey-reauth-button', HTMLButtonElement);
  reauth.addEventListener('click', () => void run(reauth, 'Waiting for your passkey…', async () => {
    await passkeySignIn(session.email);
    byId('passkey-reauth', HTMLElement).hidden = true;
    await reload('devices');
    show('Signed in with your passkey. You can now add or remove passkeys.', 'ok');
  }));

  const form = byId('passkey-form', HTMLFormElement);
  const add = byId('passkey-add-button', HTMLButtonElement);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void run(add, 'Waiting for your passkey…', async () => {
      await registerPasskey(byId('passkey-name', HTMLInputElement).value.trim());
      form.reset();
      byId('passkey-reauth', HTMLElement).hidden = true;
      await reload('devices', 'activity');
      show('Passkey added. You can approve requests with it, and sign in with it.', 'ok');
    });
  });

  // The first passkey, straight from the Requests view (any session may register the first one).
  const setup = byId('passkey-setup-button', HTMLButtonElement);
  setup.addEventListener('click', () => void run(setup, 'Waiting for your passkey…', async () => {
    await registerPasskey('');
    await reload('devices', 'activity');
    show('Passkey added. You can now approve requests with it, and sign in with it.', 'ok');
  }));

  const out = byId('signout', HTMLButtonElement);
  out.addEventListener('click', () => void run(out, 'Signing out…', signOut));
}

export function resetAccount(): void {
  session.passkeys = null;
  byId('devices', HTMLElement).replaceChildren();
  byId('passkey-reauth', HTMLElement).hidden = true;
  byId('passkey-setup', HTMLElement).hidden = true;
  byId('whoami-name', HTMLElement).textContent = '';
}
