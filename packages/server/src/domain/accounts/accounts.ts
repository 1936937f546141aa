import type { Config } from '../../config/config.ts';
import { hashPassword, verifyPassword } from '../../crypto/password.ts';
import { randomToken, sha256Hex } from '../../crypto/random.ts';
import type { SessionMethod, Store, UserRecord } from '../../store/ports/index.ts';
import type { Clock } from '../../clock.ts';
import { badRequest, conflict, unauthorized } from '../errors.ts';
import { newId } from '../ids.ts';
import { checkClient } from '../client-limit.ts';
import type { RateLimiter } from '../rate-limit.ts';
import type { AddressTakeover, PendingSignUp } from './address-takeover.ts';
import { LoginThrottle } from './login-throttle.ts';

export const SESSION_LIFETIME_MS = 30 * 86400 * 1000;
/**
 * Sign-ups per client per hour: 10 per IPv4 address or IPv6 /64 (client-address.ts), enough for a
 * household or office, not for bulk accounts; 30 per IPv6 /48, so a site's 65,536 /64s give 30, not
 * 655,360, while three households that happen to share a /48 still each get their 10.
 */
export const SIGNUP_LIMIT = { perAddress: 10, perNetwork: 30, windowSec: 3600 } as const;
const INVALID_LOGIN = 'invalid email or password';

export interface SignedIn {
  user: UserRecord;
  /** The opaque session secret; only its hash is stored. */
  sessionToken: string;
  expiresAt: number;
}

export interface CurrentSession {
  user: UserRecord;
  sessionHash: string;
  /** How this session was made; see passkey-policy.ts for what only a passkey session may do. */
  method: SessionMethod;
}

export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

/**
 * Whether the account has a password. Every sign-up sets one today; an account made without one (a
 * linked identity provider) or erased (account deletion) has an empty hash, which no password matches.
 */
export const hasPassword = (user: Pick<UserRecord, 'passwordHash'>): boolean => user.passwordHash !== '';

/** A new account's record: unverified address, no phone. */
export function newUserRecord(o: { email: string; passwordHash: string; displayName: string; createdAt: number }): UserRecord {
  return { id: newId('u'), ...o, phone: null, phoneVerified: false, emailVerified: false };
}

/** Owner accounts and their sessions (decisions §2). */
export class Accounts {
  private readonly loginThrottle: LoginThrottle;
  private takeover: Pick<AddressTakeover, 'offerToSignUp'> | undefined;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly limiter: RateLimiter,
    private readonly config: Pick<Config, 'adminEmails' | 'loginThrottle'>,
  ) {
    this.loginThrottle = new LoginThrottle(store.rateCounters, clock, config.loginThrottle);
  }

  /** Where a sign-up with a taken address goes (address-takeover.ts); app.ts sets it once the mailer exists. */
  useAddressTakeover(takeover: Pick<AddressTakeover, 'offerToSignUp'>): void {
    this.takeover = takeover;
  }

  /**
   * Throttled per client (429, SIGNUP_LIMIT) before any work, so accounts cannot be made in bulk.
   * An address held by an account that has not verified it: pending, see address-takeover.ts.
   */
  async signUp(input: { email: string; password: string; displayName?: string }, clientAddress: string): Promise<SignedIn | PendingSignUp> {
    await checkClient(this.limiter, 'signup', clientAddress, SIGNUP_LIMIT);
    const email = normalizeEmail(input.email);
    const displayName = input.displayName?.trim() || email.split('@')[0] || email;
    const user = newUserRecord({ email, passwordHash: await hashPassword(input.password), displayName, createdAt: this.clock.now() });
    if (await this.store.users.create(user)) return this.startSession(user, 'password');
    if (!this.takeover) throw conflict('an account with this email already exists; sign in instead');
    return this.takeover.offerToSignUp({ email, passwordHash: user.passwordHash, displayName });
  }

  /**
   * Password sign-in. Throttled (login-throttle.ts) before the password is even checked, in a way
   * that strangers cannot lock the owner out; unknown email and wrong password give the same answer
   * in about the same time. Only a success is taken back out of the counts.
   */
  async logIn(input: { email: string; password: string }, clientAddress: string): Promise<SignedIn> {
    const email = normalizeEmail(input.email);
    const attempt = await this.loginThrottle.admit(email, clientAddress);
    const user = await this.store.users.byEmail(email);
    if (!(await verifyPassword(user?.passwordHash, input.password)) || !user) throw unauthorized(INVALID_LOGIN);
    await attempt.succeeded();
    return this.startSession(user, 'password');
  }

  /**
   * The signed-in owner's password, checked as sign-in checks it and counted by the same throttle
   * (per account, address and both): a stolen session guesses no faster here than at sign-in, and
   * strangers still cannot lock the owner out. Throws 429 when throttled; false for a wrong password.
   */
  async confirmPassword(user: UserRecord, password: string, clientAddress: string): Promise<boolean> {
    const attempt = await this.loginThrottle.admit(user.email, clientAddress);
    if (!hasPassword(user) || !(await verifyPassword(user.passwordHash, password))) return false;
    await attempt.succeeded();
    return true;
  }

  /** A new random session id at every sign-in (no fixation), remembering how the owner signed in. */
  async startSession(user: UserRecord, method: SessionMethod): Promise<SignedIn> {
    const sessionToken = randomToken();
    const now = this.clock.now();
    const expiresAt = now + SESSION_LIFETIME_MS;
    await this.store.sessions.create({ tokenHash: sha256Hex(sessionToken), userId: user.id, createdAt: now, expiresAt, method });
    return { user, sessionToken, expiresAt };
  }

  /** The signed-in owner for a session secret, or undefined. */
  async session(token: string): Promise<CurrentSession | undefined> {
    if (token.length < 16 || token.length > 200) return undefined;
    const sessionHash = sha256Hex(token);
    const session = await this.store.sessions.live(sessionHash, this.clock.now());
    if (!session) return undefined;
    const user = await this.store.users.byId(session.userId);
    return user && { user, sessionHash, method: session.method };
  }

  logOut(sessionHash: string): Promise<void> {
    return this.store.sessions.delete(sessionHash);
  }

  async updateProfile(userId: string, patch: { displayName?: string }): Promise<UserRecord> {
    if (patch.displayName !== undefined) {
      const name = patch.displayName.trim();
      if (!name) throw badRequest('display_name must not be empty');
      await this.store.users.update(userId, { displayName: name });
    }
    const user = await this.store.users.byId(userId);
    if (!user) throw unauthorized();
    return user;
  }

  /** Admin only for an ADMIN_EMAILS address its holder has proven (decisions §25): signing up with it is not enough. */
  role(user: UserRecord): 'admin' | 'user' {
    return user.emailVerified && this.config.adminEmails.has(user.email) ? 'admin' : 'user';
  }
}

/** The phone as shown back to its owner: see phone/phone-number.ts. */
export { maskPhone } from '../phone/phone-number.ts';
