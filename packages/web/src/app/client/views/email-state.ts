// The owner's email address and whether it is verified (GET /api/me `email_verified`, decisions §25).
// Until it is, the address is not shared with sites and Mandate cannot mail the owner about their
// account, so several places ask for it: the banner, the Account card, an approval card that asks for
// the email, a security notice. Those places read this state; the ones that come and go (cards, inbox
// rows) carry the class `while-email-unverified` and are shown or hidden here when the state changes,
// so nothing has to keep a list of them.
import type { Me } from '../types.ts';

export interface EmailState {
  email: string;
  /** null: not known (signed out, or a service that does not say). */
  verified: boolean | null;
}

let state: EmailState = { email: '', verified: null };
const listeners: ((s: EmailState) => void)[] = [];

export const emailState = (): EmailState => state;

/** Only a service that says "not verified" makes the app ask: an older one says nothing, and the app neither. */
export const emailNeedsVerifying = (): boolean => state.verified === false;

/** Called once per part of the app that follows the state (banner, Account card). */
export function onEmailState(listener: (s: EmailState) => void): void {
  listeners.push(listener);
}

function apply(next: EmailState): void {
  if (next.email === state.email && next.verified === state.verified) return;
  state = next;
  for (const node of document.querySelectorAll<HTMLElement>('.while-email-unverified')) node.hidden = !emailNeedsVerifying();
  for (const listener of listeners) listener(state);
}

/** From GET /api/me, or from PATCH /api/me's answer after a change of address. */
export function setEmailState(me: Pick<Me, 'email' | 'email_verified'>): void {
  apply({ email: me.email, verified: typeof me.email_verified === 'boolean' ? me.email_verified : null });
}

export function resetEmailState(): void {
  apply({ email: '', verified: null });
}
