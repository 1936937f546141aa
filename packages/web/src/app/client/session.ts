// Who is signed in, and the few hooks that let one part of the app ask another to act
// (sign out on a lost session, offer a passkey sign-in) without importing each other.
import { ApiError, api } from './api.ts';
import type { SignInMethod } from './device.ts';

export const session = {
  signedIn: false,
  email: '',
  userId: '',
  /** Passkeys the owner has; null until the first GET /api/devices answered. */
  passkeys: null as number | null,
  /** How this session was made (GET /api/me, or what this browser remembers); null when not known. */
  method: null as SignInMethod | null,
};

export const hooks = {
  /** The session is gone: show the sign-in forms with this reason. */
  signedOut: (_reason?: string): void => undefined,
  /** Adding or removing a passkey needs a passkey sign-in first. */
  passkeySessionNeeded: (): void => undefined,
  /** What the app knows about passkeys here changed (a sign-in, a passkey made or used): redraw the advice. */
  passkeysChanged: (): void => undefined,
};

/**
 * After a 401 while signed in: is the session really gone (rather than, say, a refused passkey)?
 * If so the app signs out and says why.
 */
export async function sessionEnded(e: unknown): Promise<boolean> {
  if (!(e instanceof ApiError && e.status === 401 && session.signedIn)) return false;
  try {
    // GET /api/session answers signed out without another 401 in the console.
    const { signed_in } = await api<{ signed_in: boolean }>('GET', '/api/session');
    if (signed_in) return false;
  } catch {
    return false;
  }
  hooks.signedOut('Your session ended. Sign in again.');
  return true;
}
