// What this browser knows about itself, and the rule that turns it into advice before the owner
// presses Approve: can a passkey answer here, or must they approve on the phone that holds it?
//
// Kept in localStorage (the session cookie is per browser, and so is this): how the session was
// made, until GET /api/me says so itself (`session_method`), and which accounts have a passkey in
// this browser (noted when one is made here or answers from this device's own authenticator).

/**
 * `recovery`: signed in by account recovery (SMS code and recovery code); the account has no passkey left.
 * `oauth`: signed in with a linked identity provider; like a password session, it is not a passkey session.
 */
export type SignInMethod = 'password' | 'passkey' | 'recovery' | 'oauth';

/** Where a passkey approval can happen, as far as the app can tell before trying. */
export type ApprovePlace =
  /** The account has no passkey: add one first (or deny). */
  | 'no-passkey'
  /** A passkey should answer here: nothing to say. */
  | 'here'
  /** Signed in with a password, or the device has no authenticator of its own: the passkey is likely on the phone. */
  | 'elsewhere'
  /** This browser has no WebAuthn at all. */
  | 'unsupported';

export interface DeviceFacts {
  /** Passkeys on the account; null until GET /api/devices answered. */
  passkeys: number | null;
  /** The browser has WebAuthn. */
  webauthn: boolean;
  /** A passkey of this account was made here, or answered from this device's own authenticator. */
  passkeyHere: boolean;
  /** How this session was made; null when not known. */
  method: SignInMethod | null;
  /** A user-verifying platform authenticator (fingerprint, face, screen lock); null until known. */
  platform: boolean | null;
}

/**
 * The rule. A passkey sign-in proves a passkey answers from here (or from a phone the browser
 * reaches), and so does one made or used here; a password session on a device without any of that
 * most likely has the passkey elsewhere, and so does a device without an authenticator of its own.
 */
export function approvePlace(f: DeviceFacts): ApprovePlace {
  if (f.passkeys === 0) return 'no-passkey';
  if (!f.webauthn) return 'unsupported';
  if (f.passkeys === null || f.passkeyHere || f.method === 'passkey') return 'here';
  if (f.method === 'password' || f.method === 'oauth' || f.platform === false) return 'elsewhere';
  return 'here';
}

/** May this session add or remove passkeys (passkey-policy.ts on the server): the first one, or with a passkey session. */
export const mayManagePasskeys = (passkeys: number | null, method: SignInMethod | null): boolean =>
  passkeys === null || passkeys === 0 || (method !== 'password' && method !== 'recovery' && method !== 'oauth');

const METHOD_KEY = 'mandate.sign-in';
const HERE_KEY = 'mandate.passkey-here';

function read(key: string): string | null {
  try {
    return localStorage.getItem(key);
  } catch {
    return null; // storage off (a private window, a policy): the app just knows less
  }
}

function write(key: string, value: string | null): void {
  try {
    if (value === null) localStorage.removeItem(key);
    else localStorage.setItem(key, value);
  } catch {
    // as above
  }
}

export function rememberSignIn(method: SignInMethod): void {
  write(METHOD_KEY, method);
}

export function signInMethod(): SignInMethod | null {
  const m = read(METHOD_KEY);
  return m === 'password' || m === 'passkey' || m === 'recovery' || m === 'oauth' ? m : null;
}

export const forgetSignIn = (): void => write(METHOD_KEY, null);

function accountsHere(): string[] {
  try {
    const list: unknown = JSON.parse(read(HERE_KEY) ?? '[]');
    return Array.isArray(list) ? list.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

export function notePasskeyHere(userId: string): void {
  if (!userId || accountsHere().includes(userId)) return;
  write(HERE_KEY, JSON.stringify([...accountsHere(), userId].slice(-10)));
}

export const hasPasskeyHere = (userId: string): boolean => Boolean(userId) && accountsHere().includes(userId);

/** The account has no passkey left: none can be here. */
export function forgetPasskeyHere(userId: string): void {
  if (hasPasskeyHere(userId)) write(HERE_KEY, JSON.stringify(accountsHere().filter((id) => id !== userId)));
}
