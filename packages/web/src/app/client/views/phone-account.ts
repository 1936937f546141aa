// The phone card of the Account view (decisions §14): the verified number, masked, with a
// "Verified" badge; adding one (text a code, type it in); removing it. The number is the account's
// only once its code is verified, so a typo never replaces a verified phone.
import { ApiError, api, sentence } from '../api.ts';
import { confirmInline, run } from '../actions.ts';
import { byId } from '../dom.ts';
import { errorText } from '../errors.ts';
import { reload } from '../loaders.ts';
import { show } from '../message.ts';
import type { Me } from '../types.ts';

let pendingNumber = '';

/** What GET /api/me says about the phone: the card follows. */
export function showPhone(me: Pick<Me, 'phone' | 'phone_verified'>): void {
  const verified = Boolean(me.phone && me.phone_verified);
  byId('phone-number', HTMLElement).textContent = verified ? (me.phone ?? '') : 'No phone yet';
  byId('phone-badge', HTMLElement).hidden = !verified;
  byId('phone-remove-row', HTMLElement).hidden = !verified;
  byId('phone-send', HTMLButtonElement).textContent = verified ? 'Text a code to a new number' : 'Text me a code';
}

/** A refusal in the owner's words: the service's detail and its next step; a lost session goes to report(). */
function refusal(e: unknown): string | null {
  if (e instanceof ApiError && e.status === 401) return null;
  if (e instanceof ApiError && e.status === 409) return 'This number is already your verified phone.';
  if (e instanceof ApiError && e.nextStep) return `${sentence(e.detail)} ${sentence(e.nextStep)}`;
  return errorText(e);
}

export function setUpPhoneAccount(): void {
  const errorNode = byId('phone-error', HTMLElement);
  const sendForm = byId('phone-send-form', HTMLFormElement);
  const verifyForm = byId('phone-verify-form', HTMLFormElement);
  const fail = (e: unknown): void => {
    const text = refusal(e);
    if (text === null) throw e;
    errorNode.textContent = text;
    errorNode.hidden = false;
  };

  const send = byId('phone-send', HTMLButtonElement);
  sendForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void run(send, 'Sending…', async () => {
      errorNode.hidden = true;
      const phone = byId('phone-input', HTMLInputElement).value.trim();
      try {
        const sent = await api<{ phone: string; expires_in: number }>('POST', '/api/phone/send', { phone });
        pendingNumber = phone;
        byId('phone-sent', HTMLElement).textContent = `We texted a 6-digit code to ${sent.phone}. It is valid ${Math.round(sent.expires_in / 60)} minutes.`;
        verifyForm.hidden = false;
        byId('phone-code', HTMLInputElement).focus();
      } catch (e) {
        fail(e);
      }
    });
  });

  const verify = byId('phone-verify', HTMLButtonElement);
  verifyForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void run(verify, 'Verifying…', async () => {
      errorNode.hidden = true;
      const code = byId('phone-code', HTMLInputElement).value.trim();
      try {
        const done = await api<{ phone: string }>('POST', '/api/phone/verify', { phone: pendingNumber, code });
        sendForm.reset();
        verifyForm.reset();
        verifyForm.hidden = true;
        showPhone({ phone: done.phone, phone_verified: true });
        show(`Phone verified: ${done.phone}. It can now recover your account; make recovery codes below if you have none.`, 'ok');
        await reload('me', 'activity');
      } catch (e) {
        fail(e);
      }
    });
  });

  const remove = byId('phone-remove', HTMLButtonElement);
  remove.addEventListener('click', () => void (async () => {
    const row = byId('phone-remove-row', HTMLElement);
    if (!(await confirmInline(row, 'Remove your phone? It will no longer recover your account or be shared with sites.', 'Remove phone'))) return;
    await run(byId('phone-remove', HTMLButtonElement), 'Removing…', async () => {
      await api('DELETE', '/api/phone');
      showPhone({ phone: null, phone_verified: false });
      show('Phone removed.', 'ok');
      await reload('me', 'activity');
    }, { errorNode });
  })());
}

export function resetPhoneAccount(): void {
  pendingNumber = '';
  byId('phone-send-form', HTMLFormElement).reset();
  byId('phone-verify-form', HTMLFormElement).reset();
  byId('phone-verify-form', HTMLFormElement).hidden = true;
  byId('phone-error', HTMLElement).hidden = true;
  showPhone({ phone: null, phone_verified: false });
}
