// Signed out: sign in (password or passkey) or create an account.
import { api, userError } from '../api.ts';
import { run } from '../actions.ts';
import { byId } from '../dom.ts';
import { show } from '../message.ts';
import { passkeySignIn } from '../webauthn.ts';

export function setUpSignIn(enter: () => Promise<void>): void {
  const signupForm = byId('signup-form', HTMLFormElement);
  const signupButton = byId('signup-button', HTMLButtonElement);
  signupForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void run(signupButton, 'Creating…', async () => {
      const body: Record<string, string> = { email: byId('signup-email', HTMLInputElement).value.trim(), password: byId('signup-password', HTMLInputElement).value };
      const name = byId('signup-name', HTMLInputElement).value.trim();
      if (name) body.display_name = name;
      await api('POST', '/api/users', body);
      signupForm.reset();
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
      signinForm.reset();
      await enter();
    });
  });

  const passkeyButton = byId('signin-passkey-button', HTMLButtonElement);
  passkeyButton.addEventListener('click', () => void run(passkeyButton, 'Waiting for your passkey…', async () => {
    if (!email.value.trim()) throw userError('Enter your email first, then sign in with your passkey.');
    await passkeySignIn(email.value.trim());
    signinForm.reset();
    await enter();
  }));
}
