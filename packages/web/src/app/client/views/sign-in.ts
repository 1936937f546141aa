// Signed out: sign in (password or passkey) or create an account. A passkey needs no email: the
// button opens the browser's list of passkeys for Mandate, and where the browser supports it the
// email field offers them as suggestions too (autofill).
import { ApiError, api, userError } from '../api.ts';
import { report, run } from '../actions.ts';
import { byId } from '../dom.ts';
import { rememberSignIn } from '../device.ts';
import { show } from '../message.ts';
import { session } from '../session.ts';
import { passkeyAutofill, passkeySignIn } from '../webauthn.ts';

let enterApp: () => Promise<void> = async () => undefined;

const looksLikeEmail = (text: string): boolean => /^[^\s@]+@[^\s@]+$/.test(text);

function signedIn(method: 'password' | 'passkey'): void {
  rememberSignIn(method);
  session.method = method;
  byId('signin-form', HTMLFormElement).reset();
}

/**
 * Offers this browser's passkeys in the email field's suggestions while the sign-in form is shown.
 * Quiet when the browser cannot, the offer is withdrawn or the options cannot be had (offline, too
 * many attempts: the button still works and says why); a chosen passkey that does not sign in is
 * reported, and the offer made again.
 */
export function offerPasskeyAutofill(): void {
  void (async () => {
    let chosen = false;
    try {
      chosen = await passkeyAutofill();
    } catch (e) {
      if (session.signedIn || !(e instanceof ApiError && e.status === 401)) return;
      await report(e);
      offerPasskeyAutofill();
      return;
    }
    if (!chosen) return;
    signedIn('passkey');
    await enterApp().catch((e: unknown) => report(e));
  })();
}

export function setUpSignIn(enter: () => Promise<void>): void {
  enterApp = enter;
  // On a phone the sign-up form starts below the fold, under the sign-in form: the intro's
  // "Create an account" brings it up and puts the cursor in its first field.
  byId('signup-jump', HTMLButtonElement).addEventListener('click', () => {
    byId('signup-title', HTMLElement).scrollIntoView({ block: 'start' });
    byId('signup-email', HTMLInputElement).focus({ preventScroll: true });
  });
  const signupForm = byId('signup-form', HTMLFormElement);
  const signupButton = byId('signup-button', HTMLButtonElement);
  signupForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void run(signupButton, 'Creating…', async () => {
      const body: Record<string, string> = { email: byId('signup-email', HTMLInputElement).value.trim(), password: byId('signup-password', HTMLInputElement).value };
      const name = byId('signup-name', HTMLInputElement).value.trim();
      if (name) body.display_name = name;
      // 202: an account that never verified this address holds it; a link went to the address (address-takeover.ts).
      const made = await api<{ pending?: boolean; detail?: string; next_step?: string }>('POST', '/api/users', body);
      if (made.pending) {
        show(`Check your mail: ${made.detail ?? ''}. Then ${made.next_step ?? 'sign in'}.`, 'info');
        return;
      }
      signupForm.reset();
      signedIn('password');
      await enter();
      show('Account created. One step left: add a passkey, so you can approve what your agents ask for.', 'ok');
    });
  });

  const signinForm = byId('signin-form', HTMLFormElement);
  const email = byId('signin-email', HTMLInputElement);
  const passwordButton = byId('signin-password-button', HTMLButtonElement);
  signinForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void run(passwordButton, 'Signing in…', async () => {
      const password = byId('signin-password', HTMLInputElement).value;
      if (!password) throw userError('Enter your password, or sign in with a passkey.');
      await api('POST', '/api/login', { email: email.value.trim(), password });
      signedIn('password');
      await enter();
    });
  });

  // No email needed. One typed in is passed on, so only that account's passkey signs in.
  const passkeyButton = byId('signin-passkey-button', HTMLButtonElement);
  passkeyButton.addEventListener('click', () => void run(passkeyButton, 'Waiting for your passkey…', async () => {
    const typed = email.value.trim();
    try {
      await passkeySignIn(looksLikeEmail(typed) ? typed : undefined);
    } catch (e) {
      // The button's prompt replaced the autofill offer: make it again, then say what went wrong.
      offerPasskeyAutofill();
      throw e;
    }
    signedIn('passkey');
    await enter();
  }));
}
