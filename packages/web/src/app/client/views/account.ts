// "Account": who is signed in, adding passkeys, this device's notifications, what to be notified
// about, and signing out (the device list is in devices.ts). Once the owner has a passkey,
// changing passkeys needs a passkey sign-in: a password alone must not let someone add their own.
import { run } from '../actions.ts';
import { byId, el } from '../dom.ts';
import { reload } from '../loaders.ts';
import { show } from '../message.ts';
import { mayManagePasskeys, rememberSignIn } from '../device.ts';
import { session } from '../session.ts';
import type { Me } from '../types.ts';
import { passkeySignIn, registerPasskey } from '../webauthn.ts';
import { resetNotifySettings, setUpNotifySettings } from './notify-settings.ts';
import { offerPush, removePushOffer } from './push-offer.ts';
import { resetPushSection, setUpPushSection } from './push-section.ts';

export function showWhoami(me: Me): void {
  byId('whoami-name', HTMLElement).replaceChildren(el('span', { text: me.display_name }), el('span', { className: 'whoami-email', text: me.email }));
}

/**
 * With a password session and passkeys on the account, adding (this device) or removing a passkey
 * needs a passkey sign-in first: the Account view says how up front, instead of a form that would
 * be refused.
 */
export function showPasskeyManagement(): void {
  const may = mayManagePasskeys(session.passkeys, session.method);
  byId('passkey-reauth', HTMLElement).hidden = may;
  byId('passkey-form', HTMLFormElement).hidden = !may;
}

/** The service refused a passkey change to this session (a 403 with next_step): it is a password session. */
export function askForPasskeySession(): void {
  session.method = 'password';
  rememberSignIn('password');
  showPasskeyManagement();
  show('To add or remove passkeys, sign in with one of your passkeys first.', 'error');
  byId('passkey-reauth', HTMLElement).scrollIntoView({ block: 'nearest' });
}

export function setUpAccount(signOut: () => Promise<void>): void {
  const reauth = byId('passkey-reauth-button', HTMLButtonElement);
  reauth.addEventListener('click', () => void run(reauth, 'Waiting for your passkey…', async () => {
    await passkeySignIn(session.email);
    await reload('devices');
    show('Signed in with your passkey. You can now add a passkey for this device, or remove one.', 'ok');
  }));

  const form = byId('passkey-form', HTMLFormElement);
  const add = byId('passkey-add-button', HTMLButtonElement);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void run(add, 'Waiting for your passkey…', async () => {
      const first = session.passkeys === 0;
      await registerPasskey(byId('passkey-name', HTMLInputElement).value.trim());
      form.reset();
      await reload('devices', 'activity');
      show('Passkey added. You can approve requests with it, and sign in with it.', 'ok');
      if (first) await offerPush(form);
    });
  });

  // The first passkey, straight from the Requests view (any session may register the first one).
  const setup = byId('passkey-setup-button', HTMLButtonElement);
  setup.addEventListener('click', () => void run(setup, 'Waiting for your passkey…', async () => {
    await registerPasskey('');
    await reload('devices', 'activity');
    show('Passkey added. You can now approve requests with it, and sign in with it.', 'ok');
    await offerPush(byId('passkey-setup', HTMLElement));
  }));

  setUpPushSection();
  setUpNotifySettings();
  const out = byId('signout', HTMLButtonElement);
  out.addEventListener('click', () => void run(out, 'Signing out…', signOut));
}

export function resetAccount(): void {
  session.passkeys = null;
  byId('devices', HTMLElement).replaceChildren();
  byId('passkey-reauth', HTMLElement).hidden = true;
  byId('passkey-form', HTMLFormElement).hidden = false;
  byId('passkey-setup', HTMLElement).hidden = true;
  byId('whoami-name', HTMLElement).textContent = '';
  removePushOffer();
  resetPushSection();
  resetNotifySettings();
}
