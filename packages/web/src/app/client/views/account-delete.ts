// "Delete account", the danger zone at the end of the Account view: what deletion does, then a form
// where the owner types their email (the button stays off until it matches) and their password.
// POST /api/account/delete; on success the app is signed out and the sign-in page says it is done.
import { ApiError, api, sentence } from '../api.ts';
import { report } from '../actions.ts';
import { byId } from '../dom.ts';
import { errorText } from '../errors.ts';
import { show } from '../message.ts';
import { hooks, session } from '../session.ts';

export const DELETED_MESSAGE = 'Your account has been deleted, with its agents, passkeys and devices. You can create a new account with the same email address at any time.';

/** The email as the service compares it (trimmed, lower case). */
const sameEmail = (typed: string): boolean => session.email !== '' && typed.trim().toLowerCase() === session.email.trim().toLowerCase();

/** Why the service refused, in words for this form; null for a lost session (reported as such). */
function refused(e: unknown): string | null {
  if (!(e instanceof ApiError)) return errorText(e);
  if (e.status === 401) return null;
  if (e.status === 400 || e.status === 403) return `${sentence(e.detail)}${e.nextStep ? ` ${sentence(e.nextStep)}` : ''}`;
  return errorText(e);
}

export function setUpAccountDelete(): void {
  const form = byId('delete-form', HTMLFormElement);
  const confirm = byId('delete-confirm', HTMLInputElement);
  const password = byId('delete-password', HTMLInputElement);
  const submit = byId('delete-button', HTMLButtonElement);
  const errorNode = byId('delete-error', HTMLElement);
  const sync = (): void => {
    submit.disabled = !sameEmail(confirm.value);
  };
  confirm.addEventListener('input', sync);
  sync();

  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    if (!sameEmail(confirm.value)) return;
    void (async () => {
      const body: Record<string, string> = { confirm: confirm.value.trim() };
      if (password.value) body.password = password.value;
      errorNode.hidden = true;
      submit.disabled = true;
      submit.textContent = 'Deleting…';
      try {
        await api<{ deleted: true }>('POST', '/api/account/delete', body);
        resetAccountDelete();
        hooks.signedOut();
        show(DELETED_MESSAGE, 'ok');
      } catch (e) {
        const text = refused(e);
        if (text === null) await report(e, errorNode);
        else {
          errorNode.textContent = text;
          errorNode.hidden = false;
        }
        submit.textContent = 'Delete my account';
        sync();
      }
    })();
  });
}

export function resetAccountDelete(): void {
  byId('delete-form', HTMLFormElement).reset();
  byId('delete-error', HTMLElement).hidden = true;
  byId('delete-open', HTMLDetailsElement).open = false;
  const submit = byId('delete-button', HTMLButtonElement);
  submit.textContent = 'Delete my account';
  submit.disabled = true;
}
