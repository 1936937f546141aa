// Signed out, "Lost your passkey?" (decisions §14): email and phone, then the texted code, one
// recovery code and a new password. The service answers the first step the same whether or not
// they matched, so the app cannot say more than "if they match, a code is on its way". Recovered,
// the owner is signed in with a `recovery` session and taken to Account to add a new passkey.
import { ApiError, api, sentence } from '../api.ts';
import { run } from '../actions.ts';
import { byId } from '../dom.ts';
import { rememberSignIn } from '../device.ts';
import { errorText } from '../errors.ts';
import { show } from '../message.ts';
import { session } from '../session.ts';

function explain(e: unknown): string {
  if (e instanceof ApiError && e.status === 401) {
    return 'That did not work: the SMS code or the recovery code is wrong, or the SMS code expired (10 minutes) or was tried 5 times. Check both and try again, or press "Send a new code".';
  }
  if (e instanceof ApiError && e.nextStep) return `${sentence(e.detail)} ${sentence(e.nextStep)}`;
  return errorText(e);
}

function open(show: boolean): void {
  byId('recover', HTMLElement).hidden = !show;
  if (show) {
    const email = byId('signin-email', HTMLInputElement).value.trim();
    if (email) byId('recover-email', HTMLInputElement).value = email;
    byId('recover', HTMLElement).scrollIntoView({ block: 'start' });
    byId('recover-title', HTMLElement).focus({ preventScroll: true });
  }
}

export function setUpRecover(enter: () => Promise<void>): void {
  byId('recover-open', HTMLButtonElement).addEventListener('click', () => open(true));
  byId('recover-close', HTMLButtonElement).addEventListener('click', () => {
    resetRecover();
    byId('signin-title', HTMLElement).scrollIntoView({ block: 'start' });
  });

  const startForm = byId('recover-start-form', HTMLFormElement);
  const completeForm = byId('recover-complete-form', HTMLFormElement);
  const startError = byId('recover-start-error', HTMLElement);
  const send = byId('recover-send', HTMLButtonElement);
  startForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void run(send, 'Sending…', async () => {
      startError.hidden = true;
      try {
        await api('POST', '/api/recovery/start', { email: byId('recover-email', HTMLInputElement).value.trim(), phone: byId('recover-phone', HTMLInputElement).value.trim() });
      } catch (e) {
        startError.textContent = explain(e);
        startError.hidden = false;
        return;
      }
      startForm.hidden = true;
      completeForm.hidden = false;
      byId('recover-sms-code', HTMLInputElement).focus();
    });
  });

  byId('recover-restart', HTMLButtonElement).addEventListener('click', () => {
    completeForm.hidden = true;
    startForm.hidden = false;
    byId('recover-phone', HTMLInputElement).focus();
  });

  const completeError = byId('recover-complete-error', HTMLElement);
  const complete = byId('recover-complete', HTMLButtonElement);
  completeForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void run(complete, 'Recovering…', async () => {
      completeError.hidden = true;
      try {
        await api('POST', '/api/recovery/complete', {
          email: byId('recover-email', HTMLInputElement).value.trim(),
          sms_code: byId('recover-sms-code', HTMLInputElement).value.trim(),
          recovery_code: byId('recover-code', HTMLInputElement).value.trim(),
          new_password: byId('recover-password', HTMLInputElement).value,
        });
      } catch (e) {
        completeError.textContent = explain(e);
        completeError.hidden = false;
        return;
      }
      resetRecover();
      rememberSignIn('recovery');
      session.method = 'recovery';
      await enter();
      location.hash = 'account';
      show('Account recovered: your password is the new one, and your old passkeys and other sign-ins are gone. Add a new passkey now (Your devices, "Add a passkey"), then make new recovery codes.', 'ok');
      byId('passkey-name', HTMLInputElement).scrollIntoView({ block: 'center' });
    });
  });
}

export function resetRecover(): void {
  byId('recover-start-form', HTMLFormElement).reset();
  byId('recover-complete-form', HTMLFormElement).reset();
  byId('recover-start-form', HTMLFormElement).hidden = false;
  byId('recover-complete-form', HTMLFormElement).hidden = true;
  byId('recover-start-error', HTMLElement).hidden = true;
  byId('recover-complete-error', HTMLElement).hidden = true;
  byId('recover', HTMLElement).hidden = true;
}
