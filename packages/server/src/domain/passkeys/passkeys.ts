import { randomToken } from '../../crypto/random.ts';
import * as webauthn from '../../crypto/webauthn.ts';
import type { ChallengeRecord, PasskeyRecord, SessionMethod, Store, UserRecord } from '../../store/ports/index.ts';
import { normalizeEmail } from '../accounts/accounts.ts';
import type { Clock } from '../../clock.ts';
import { badRequest, conflict, notFound, unauthorized } from '../errors.ts';
import { looksLikeId, newId } from '../ids.ts';
import { checkClient } from '../client-limit.ts';
import type { RateLimiter } from '../rate-limit.ts';
import { requirePasskeyManagement } from './passkey-policy.ts';

export const CHALLENGE_LIFETIME_MS = 5 * 60 * 1000;
export const DEVICE_NAME_MAX = 100;
/** Passkey sign-in steps (options and verification each count) per client address per 5 minutes. */
export const PASSKEY_LOGIN_LIMIT = { perAddress: 30, windowSec: 300 } as const;
/** The one answer to every failed passkey sign-in: which step failed would help an attacker. */
const SIGN_IN_FAILED = 'passkey sign-in failed';
const BAD_REGISTRATION_CHALLENGE =
  'registration challenge unknown, already used, expired or issued to another session; ask for new options (GET /api/webauthn/register/options)';

export interface Ceremony<T> {
  challenge: string;
  options: T;
}

/** A challenge made by the caller rather than at random: it commits to what is approved (decisions §29). */
export interface CommittedChallenge {
  challenge: string;
  /** The random bits the challenge commits to, kept with it. */
  nonce: string;
}

/** A verified approval assertion: the passkey (counter advanced), the consumed challenge and the assertion. */
export interface VerifiedApproval {
  passkey: PasskeyRecord;
  issued: ChallengeRecord;
  assertion: webauthn.AssertionJSON;
}

/** The signed-in session that adds or removes a passkey (an OwnerContext fits). */
export interface ManagingSession {
  user: { id: string };
  sessionHash: string;
  method: SessionMethod;
}

/**
 * Owner passkeys (decisions §3): registration, passwordless sign-in and assertions that approve a
 * request. RP id and origin come from the public base URL. Every challenge is random, single-use
 * (consumed atomically, so of two racing answers one wins), bound to who asked for it, and lives
 * five minutes. Sign counters are advanced with compare-and-set.
 */
export class Passkeys {
  private readonly rp: webauthn.RelyingParty;
  private readonly registeredHooks: ((passkey: PasskeyRecord) => Promise<void>)[] = [];
  private readonly firstHooks: ((passkey: PasskeyRecord) => Promise<void>)[] = [];

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly limiter: RateLimiter,
    opts: { baseUrl: string; rpName: string },
  ) {
    const url = new URL(opts.baseUrl);
    this.rp = { id: url.hostname, origin: url.origin, name: opts.rpName };
  }

  /**
   * Runs after a passkey is registered while the account already had one (the owner's devices are
   * told: a new way in is news). The first passkey goes to `onFirstRegistered` instead.
   */
  onRegistered(hook: (passkey: PasskeyRecord) => Promise<void>): void {
    this.registeredHooks.push(hook);
  }

  /**
   * Runs after the account's first passkey is registered: any session may add it, a password
   * session too, so whoever holds only the password could enrol one before the owner does
   * (first-passkey.ts tells the owner, with an undo link by mail).
   */
  onFirstRegistered(hook: (passkey: PasskeyRecord) => Promise<void>): void {
    this.firstHooks.push(hook);
  }

  /**
   * Options for `navigator.credentials.create`, bound to this user and this session. Once the owner
   * has a passkey, only a passkey session may add another (passkey-policy.ts).
   */
  async registrationOptions(session: ManagingSession): Promise<Ceremony<webauthn.PublicKeyCredentialCreationOptionsJSON>> {
    const { sessionHash } = session;
    const userId = session.user.id;
    const user = await this.store.users.byId(userId);
    if (!user) throw unauthorized();
    const existing = await this.store.passkeys.listForUser(userId);
    requirePasskeyManagement(session.method, existing.length);
    const challenge = await this.newChallenge({ purpose: 'register', userId, sessionHash, subject: null });
    const options = await webauthn.registrationOptions({
      rp: this.rp,
      challenge,
      user: { id: user.id, name: user.email, displayName: user.displayName },
      exclude: existing.map(credentialRef),
    });
    return { challenge, options };
  }

  async verifyRegistration(
    session: ManagingSession,
    input: { challenge: string; attestation: unknown; name?: string; userAgent?: string },
  ): Promise<{ deviceId: string }> {
    const { sessionHash } = session;
    const userId = session.user.id;
    const name = input.name?.trim();
    if (name !== undefined && (name.length === 0 || name.length > DEVICE_NAME_MAX)) throw badRequest(`name must be 1 to ${DEVICE_NAME_MAX} characters`);
    // Consumed before anything else, so a challenge answers at most one attempt, good or bad.
    const issued = await this.store.challenges.consume(input.challenge, 'register', this.clock.now());
    if (!issued || issued.userId !== userId || issued.sessionHash !== sessionHash) throw badRequest(BAD_REGISTRATION_CHALLENGE);
    // Checked again here: options fetched while the owner had no passkey must not add a second one.
    const before = (await this.store.passkeys.listForUser(userId)).length;
    requirePasskeyManagement(session.method, before);
    const result = await webauthn.verifyRegistration({ rp: this.rp, challenge: issued.challenge, response: input.attestation });
    if (!result.ok) throw badRequest(`passkey registration failed: ${result.reason}`);
    const now = this.clock.now();
    const record: PasskeyRecord = {
      id: newId('dev'),
      userId,
      credentialId: result.value.credentialId,
      publicKey: result.value.publicKey,
      counter: result.value.counter,
      transports: result.value.transports,
      name: name || deviceName(input.userAgent),
      createdAt: now,
      lastUsedAt: null,
    };
    if (!(await this.store.passkeys.create(record))) throw conflict('this passkey is already registered');
    // Two first registrations racing both count as first: each is told, with its own undo link.
    for (const hook of before === 0 ? this.firstHooks : this.registeredHooks) await hook(record);
    return { deviceId: record.id };
  }

  /**
   * Options for a passwordless sign-in, with or without an email. Nothing here depends on whether
   * `email` has an account (no lookup, no allowCredentials): the authenticator offers its
   * discoverable credentials, and the challenge is bound to no user. Without an email (the person
   * picks a passkey from the browser's list or autofill) the credential alone names the account at
   * verification; with one, the email is remembered with the challenge and checked there.
   * Throttled per client address (429).
   */
  async loginOptions(email: string | undefined, clientAddress: string): Promise<Ceremony<webauthn.PublicKeyCredentialRequestOptionsJSON>> {
    await this.throttleLogin(clientAddress);
    const subject = email === undefined ? null : normalizeEmail(email);
    const challenge = await this.newChallenge({ purpose: 'login', userId: null, sessionHash: null, subject });
    return { challenge, options: await webauthn.authenticationOptions({ rp: this.rp, challenge }) };
  }

  /**
   * The account a valid sign-in assertion proves: the passkey is found by its credential id and the
   * account by the passkey (and must be the one the user handle names, when sent). The challenge is
   * consumed before anything else (of two racing answers one wins). Any failure is one 401.
   * Throttled per client address (429) first.
   */
  async verifyLogin(input: { challenge: string; assertion: unknown }, clientAddress: string): Promise<UserRecord> {
    await this.throttleLogin(clientAddress);
    const issued = await this.store.challenges.consume(input.challenge, 'login', this.clock.now());
    if (!issued || !webauthn.isAuthenticationResponse(input.assertion)) throw unauthorized(SIGN_IN_FAILED);
    const passkey = await this.store.passkeys.byCredentialId(input.assertion.id);
    if (!passkey) throw unauthorized(SIGN_IN_FAILED);
    if (issued.subject) {
      // The person typed an email: a passkey of another account must not sign them in there.
      const named = await this.store.users.byEmail(issued.subject);
      if (named && named.id !== passkey.userId) throw unauthorized(SIGN_IN_FAILED);
    }
    await this.checkAssertion(passkey, issued.challenge, input.assertion, SIGN_IN_FAILED);
    const user = await this.store.users.byId(passkey.userId);
    if (!user) throw unauthorized(SIGN_IN_FAILED);
    return user;
  }

  /**
   * Options for approving `subject` (a request id) with one of this owner's passkeys. The challenge
   * is random, or `committed` when the caller binds it to what is approved (it stays single use).
   */
  async assertionOptions(userId: string, subject: string, committed?: CommittedChallenge): Promise<Ceremony<webauthn.PublicKeyCredentialRequestOptionsJSON>> {
    const passkeys = await this.store.passkeys.listForUser(userId);
    if (passkeys.length === 0) throw conflict('no passkey registered: add one (POST /api/webauthn/register/verify) before approving');
    const challenge = await this.newChallenge({ purpose: 'txn', userId, sessionHash: null, subject }, committed);
    const options = await webauthn.authenticationOptions({
      rp: this.rp,
      challenge,
      allow: passkeys.map(credentialRef),
    });
    return { challenge, options };
  }

  /**
   * Checks an assertion approving `subject` for this owner: its challenge (read from the assertion,
   * then consumed) must have been issued to this owner for this subject, and its credential must be
   * this owner's. Returns the passkey used, its counter advanced.
   */
  async verifyAssertion(userId: string, subject: string, assertion: unknown): Promise<PasskeyRecord> {
    return (await this.verifyApproval(userId, subject, assertion)).passkey;
  }

  /** As verifyAssertion, answering also the consumed challenge (its nonce) and the assertion verified. */
  async verifyApproval(userId: string, subject: string, assertion: unknown): Promise<VerifiedApproval> {
    const failed = 'passkey assertion failed; ask for new assertion options and try again';
    if (!webauthn.isAuthenticationResponse(assertion)) throw unauthorized(failed);
    const claimed = webauthn.claimedChallenge(assertion);
    const issued = claimed === undefined ? undefined : await this.store.challenges.consume(claimed, 'txn', this.clock.now());
    if (!issued || issued.userId !== userId || issued.subject !== subject) throw unauthorized(failed);
    const passkey = await this.store.passkeys.byCredentialId(assertion.id);
    if (!passkey || passkey.userId !== userId) throw unauthorized(failed);
    return { passkey: await this.checkAssertion(passkey, issued.challenge, assertion, failed), issued, assertion };
  }

  devices(userId: string): Promise<PasskeyRecord[]> {
    return this.store.passkeys.listForUser(userId);
  }

  /**
   * 404 alike for an unknown id and another owner's device: ids cannot be probed. Only a passkey
   * session may remove a passkey (passkey-policy.ts).
   */
  async removeDevice(session: ManagingSession, deviceId: string): Promise<void> {
    const userId = session.user.id;
    requirePasskeyManagement(session.method, (await this.store.passkeys.listForUser(userId)).length);
    if (!looksLikeId('dev', deviceId) || !(await this.store.passkeys.delete(userId, deviceId))) throw notFound('device not found');
  }

  /**
   * Per IPv4 address or IPv6 /64 (client-address.ts), and 4 times that per IPv6 /48: each options
   * call stores a challenge, so a site's 65,536 /64s must not each get a fresh allowance.
   */
  private throttleLogin(clientAddress: string): Promise<void> {
    return checkClient(this.limiter, 'passkey-login', clientAddress, { ...PASSKEY_LOGIN_LIMIT, perNetwork: 4 * PASSKEY_LOGIN_LIMIT.perAddress });
  }

  private async newChallenge(
    c: { purpose: 'register' | 'login' | 'txn'; userId: string | null; sessionHash: string | null; subject: string | null },
    committed?: CommittedChallenge,
  ): Promise<string> {
    const challenge = committed?.challenge ?? randomToken(32);
    await this.store.challenges.create({ ...c, challenge, nonce: committed?.nonce ?? null, expiresAt: this.clock.now() + CHALLENGE_LIFETIME_MS });
    return challenge;
  }

  /** Signature, user handle and sign counter; the counter moves by compare-and-set. */
  private async checkAssertion(passkey: PasskeyRecord, challenge: string, assertion: webauthn.AssertionJSON, failed: string): Promise<PasskeyRecord> {
    const handle = webauthn.userHandle(assertion);
    if (handle !== undefined && handle !== passkey.userId) throw unauthorized(failed);
    const result = await webauthn.verifyAuthentication({
      rp: this.rp,
      challenge,
      credential: { ...credentialRef(passkey), publicKey: passkey.publicKey, counter: passkey.counter },
      response: assertion,
    });
    if (!result.ok) throw unauthorized(failed);
    const next = result.value.newCounter;
    // A counter that does not grow means a cloned authenticator or a replay. Authenticators that
    // keep no counter always report 0, which is allowed only while the stored one is 0 too.
    if ((next > 0 || passkey.counter > 0) && next <= passkey.counter) throw unauthorized(failed);
    const now = this.clock.now();
    // Compare-and-set: of two assertions racing from the same counter value, one loses here.
    if (!(await this.store.passkeys.advanceCounter(passkey.id, passkey.counter, next, now))) throw unauthorized(failed);
    return { ...passkey, counter: next, lastUsedAt: now };
  }
}

/** How the WebAuthn layer names a stored passkey. */
const credentialRef = (p: PasskeyRecord): webauthn.CredentialRef => ({ id: p.credentialId, transports: p.transports });

const BROWSERS: ReadonlyArray<readonly [string, string]> = [['Edg/', 'Edge'], ['Firefox/', 'Firefox'], ['Chrome/', 'Chrome'], ['Safari/', 'Safari']];
const SYSTEMS: ReadonlyArray<readonly [string, string]> = [
  ['iPhone', 'iPhone'], ['iPad', 'iPad'], ['Android', 'Android'], ['CrOS', 'ChromeOS'], ['Mac OS X', 'Mac'], ['Windows', 'Windows'], ['Linux', 'Linux'],
];

/** A readable default name for a new passkey, from the registering browser's user agent. */
export function deviceName(userAgent: string | undefined): string {
  const ua = userAgent ?? '';
  const pick = (list: ReadonlyArray<readonly [string, string]>) => list.find(([token]) => ua.includes(token))?.[1];
  const parts = [pick(BROWSERS), pick(SYSTEMS)].filter((p): p is string => p !== undefined);
  return parts.length ? `Passkey (${parts.join(' on ')})` : 'Passkey';
}
