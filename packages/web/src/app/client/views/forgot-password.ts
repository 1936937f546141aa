// "Forgot your password?" under the sign-in form: asks the service to mail a link to choose a new
// password (POST /api/password/forgot). The service answers the same whether or not an account has
// the address, so the app can only say that a link is on its way IF the address is a verified one.
// The link opens the service's own page, where the new password is chosen; then one signs in here.
import { run } from '../actions.ts';
import { api } from '../api.ts';
import { byId } from '../dom.ts';

export function setUpForgotPassword(): void {
  const open = byId('forgot-open', HTMLButtonElement);
  const form = byId('forgot-form', HTMLFormElement);
  const email = byId('forgot-email', HTMLInputElement);
  const sent = byId('forgot-sent', HTMLElement);
  const error = byId('forgot-error', HTMLElement);
  const submit = byId('forgot-button', HTMLButtonElement);

  open.addEventListener('click', () => {
    form.hidden = !form.hidden;
    open.setAttribute('aria-expanded', String(!form.hidden));
    if (form.hidden) return;
    // The address typed for signing in is most likely the one.
    email.value ||= byId('signin-email', HTMLInputElement).value.trim();
    sent.hidden = true;
    email.focus();
  });

  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    sent.hidden = true;
    void run(submit, 'Sending…', async () => {
      const address = email.value.trim();
      await api('POST', '/api/password/forgot', { email: address });
      sent.textContent = `If ${address} is the verified address of an account, a link is on its way: open it within 1 hour to choose a new password, then sign in here with it. Nothing arrives? Check the spelling and your spam folder; an address that was never verified gets no mail (sign in with a passkey instead).`;
      sent.hidden = false;
    }, { errorNode: error });
  });
}
