// The email card of the Account view: the address with a "Verified" / "Not verified" badge, "Send
// link" while it is not verified, and changing it (PATCH /api/me with the current password; a
// passkey session needs none). A new address starts unverified: the card says so before the change.
import { ApiError, api, sentence } from '../api.ts';
import { report } from '../actions.ts';
import { byId } from '../dom.ts';
import { errorText } from '../errors.ts';
import { reload } from '../loaders.ts';
import { show } from '../message.ts';
import type { Me } from '../types.ts';
import { type EmailState, emailNeedsVerifying, onEmailState, setEmailState } from './email-state.ts';
import { sendLinkControl } from './email-link.ts';

function showState(s: EmailState): void {
  byId('email-address', HTMLElement).textContent = s.email;
  const badge = byId('email-badge', HTMLElement);
  badge.hidden = s.verified === null;
  badge.textContent = s.verified ? 'Verified' : 'Not verified';
  badge.className = `email-badge ${s.verified ? 'verified' : 'not-verified'}`;
  byId('email-unverified', HTMLElement).hidden = !emailNeedsVerifying();
}

/** Why a change was refused, in the words the owner needs (the 401 of a lost session is reported as such). */
function changeRefused(e: unknown): string | null {
  if (!(e instanceof ApiError)) return errorText(e);
  if (e.status === 401) return null;
  if (e.status === 409) return 'Another account already uses this address. Enter a different one.';
  // Wrong or missing password: the service says what and what to do (`next_step`); this is not the
  // "sign in with a passkey" case of passkey changes, so it stays on the form.
  if (e.status === 403 && e.nextStep) return `${sentence(e.detail)} ${sentence(e.nextStep)}`;
  return errorText(e);
}

export function setUpEmailAccount(): void {
  const send = sendLinkControl();
  byId('email-unverified', HTMLElement).append(send.node);
  onEmailState(showState);

  const form = byId('email-form', HTMLFormElement);
  const submit = byId('email-change-button', HTMLButtonElement);
  const input = byId('email-new', HTMLInputElement);
  const password = byId('email-password', HTMLInputElement);
  const errorNode = byId('email-form-error', HTMLElement);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void (async () => {
      const email = input.value.trim();
      const body: Record<string, string> = { email };
      if (password.value) body.current_password = password.value;
      errorNode.hidden = true;
      submit.disabled = true;
      submit.textContent = 'Changing…';
      try {
        const me = await api<Pick<Me, 'email' | 'email_verified'>>('PATCH', '/api/me', body);
        setEmailState({ email: me.email, email_verified: me.email_verified ?? false });
        form.reset();
        byId('email-change', HTMLDetailsElement).open = false;
        send.status.hidden = true;
        show(`Your email address is now ${me.email}. It is not verified yet: press "Send link" and open the link we mail there.`, 'ok');
        await reload('me');
      } catch (e) {
        const text = changeRefused(e);
        if (text === null) await report(e, errorNode);
        else {
          errorNode.textContent = text;
          errorNode.hidden = false;
        }
      } finally {
        submit.disabled = false;
        submit.textContent = 'Change email';
      }
    })();
  });
}

export function resetEmailAccount(): void {
  byId('email-form', HTMLFormElement).reset();
  byId('email-form-error', HTMLElement).hidden = true;
  byId('email-change', HTMLDetailsElement).open = false;
  for (const status of byId('email-card', HTMLElement).querySelectorAll<HTMLElement>('.send-link-status')) status.hidden = true;
}
