import type { SessionMethod } from '../../store/ports/index.ts';
import { forbidden } from '../errors.ts';

export const PASSKEY_SESSION_REQUIRED = 'sign in with one of your passkeys to add or remove passkeys';
const NEXT_STEP =
  'sign in with a passkey you already have (GET /api/webauthn/login/options, then POST /api/webauthn/login/verify) and repeat this request with that session';

/**
 * Who may add or remove an owner's passkeys. Approvals need a passkey assertion; if a password
 * session could enrol a passkey, a phished password would be enough to approve agents (enrol the
 * attacker's key, then approve with it) and to lock the owner out (remove theirs). So once the owner
 * has a passkey, changing the set takes a session made by signing in with one of them. While they
 * have none, any session may add the first: there is nothing stronger to ask for yet. That is how a
 * `recovery` session (account recovery removed every passkey, recovery.ts) adds the new one; it
 * approves nothing before then, since approving needs an assertion by one of the owner's passkeys.
 */
export function mayManagePasskeys(method: SessionMethod, registeredPasskeys: number): boolean {
  return registeredPasskeys === 0 || method === 'passkey';
}

/** 403 with `next_step` unless `mayManagePasskeys`. */
export function requirePasskeyManagement(method: SessionMethod, registeredPasskeys: number): void {
  if (!mayManagePasskeys(method, registeredPasskeys)) throw forbidden(PASSKEY_SESSION_REQUIRED, { next_step: NEXT_STEP });
}
