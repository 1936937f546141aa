/**
 * Forgotten password (issue 23, item 4; decisions §2 and §25).
 *
 * `forgot` answers the same whether or not an account has the address, and whether or not it is
 * verified: same status, same body, and about the same time, since everything that depends on the
 * account (looking it up, storing a link, queueing the mail) runs after the answer is decided, off
 * the request's path. Its limits count the address asked about (whether or not an account has it)
 * and the client, so a 429 tells nothing either. A link goes only to a VERIFIED address: an
 * unverified one was never proven to be the holder's, so mailing it a way into the account would
 * hand the account to whoever typed the address at sign-up. Nothing is sent then.
 *
 * The link: 32 random bytes in the mail only, stored as its SHA-256 (email-links.ts), single-use,
 * 1 hour, bound to the account and the address it went to (a change of address voids it). A newer
 * request voids the older links of the account: only the newest mail works, so a mailbox read later
 * holds fewer live links.
 *
 * `reset` consumes the link in one conditional UPDATE (of racing callers exactly one wins) in one
 * transaction with setting the new password (argon2id), ending every session of the account,
 * voiding its other reset links, and the Activity record; then a `security` notice (inbox and push).
 * The resetter is NOT signed in: they sign in with the new password as usual (through the login
 * throttle; a browser's password manager then offers to save it). Passkeys stay; approving still
 * needs one (a password session cannot approve).
 */
import { hashPassword } from '../../crypto/password.ts';
import { sha256Hex } from '../../crypto/random.ts';
import type { Store } from '../../store/ports/index.ts';
import type { Clock } from '../../clock.ts';
import { badRequest } from '../errors.ts';
import { checkClient } from '../client-limit.ts';
import type { RateLimiter } from '../rate-limit.ts';
import type { Mailer } from '../mail/mailer.ts';
import { passwordResetMail } from '../mail/password-reset-mail.ts';
import { normalizeEmail } from './accounts.ts';
import { LINK_ATTEMPTS, issueLink, linkKey, linkUrl } from './email-links.ts';

export const RESET_PATH = '/api/password/reset';
export const RESET_LINK_LIFETIME_SEC = 3600;
export const MIN_PASSWORD_LENGTH = 8;
/** Requests per address asked about (whether or not an account has it) per hour: at most this many mails reach an inbox. */
export const FORGOT_PER_ACCOUNT = { limit: 3, windowSec: 3600 } as const;
/** Requests per client (IPv4 address or IPv6 /64; 30 per IPv6 /48) per hour: nobody walks a list of addresses. */
export const FORGOT_PER_CLIENT = { perAddress: 10, perNetwork: 30, windowSec: 3600 } as const;

export const FORGOT_ANSWER = {
  accepted: true as const,
  detail: 'If an account has this address and has verified it, a link to choose a new password is on its way. It works once, for 1 hour.',
  next_step: 'open the link in the mail; nothing arrives if the address is not verified on an account (then sign in with a passkey, or ask the administrator)',
};
export type ForgotAnswer = typeof FORGOT_ANSWER;

export const BAD_RESET_LINK =
  'this password link is not valid: it was already used, it expired (links last 1 hour), a newer link was asked for, or the account\'s address changed since. Ask for a new link from the sign-in page (Forgot your password?)';

export interface ResetDone {
  password_reset: true;
  email: string;
  /** The resetter is not signed in: every session ended, and they sign in with the new password. */
  signed_in: false;
  next_step: string;
}

export interface PasswordResetDeps {
  store: Store;
  clock: Clock;
  limiter: RateLimiter;
  mailer: Mailer;
  /** The `security` notice (inbox and push): notifications/notifier.ts. */
  notices: { security(userId: string, title: string, body: string): Promise<void> };
  baseUrl: string;
  /** Where a failure of the off-path mailing goes (never with the address's token). */
  onError: (err: unknown) => void;
}

export class PasswordReset {
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly d: PasswordResetDeps) {}

  /** POST /api/password/forgot: always FORGOT_ANSWER (or the same 429 for everyone past the limits). */
  async forgot(email: string, clientAddress: string): Promise<ForgotAnswer> {
    const address = normalizeEmail(email);
    await checkClient(this.d.limiter, 'password-forgot', clientAddress, FORGOT_PER_CLIENT);
    await this.d.limiter.check(`password-forgot:acct:${sha256Hex(address)}`, FORGOT_PER_ACCOUNT.limit, FORGOT_PER_ACCOUNT.windowSec);
    const work = this.mailLink(address, clientAddress).catch(this.d.onError);
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
    return FORGOT_ANSWER;
  }

  /** Resolves once every link being mailed is stored and queued (tests; the app waits for it on close). */
  async settled(): Promise<void> {
    while (this.inFlight.size) await Promise.all([...this.inFlight]);
  }

  /** The page behind a link: the address, or undefined when the link is not valid. Uses nothing. */
  async preview(token: string, clientAddress: string): Promise<{ email: string } | undefined> {
    await this.throttle(clientAddress);
    const key = linkKey(token);
    if (key === undefined) return undefined;
    const link = await this.d.store.emailTokens.peek(key, 'reset_password', this.d.clock.now());
    if (!link) return undefined;
    const user = await this.d.store.users.byId(link.userId);
    return user && user.email === link.email ? { email: link.email } : undefined;
  }

  /**
   * POST /api/password/reset. 400 BAD_RESET_LINK for a bad, used, expired or voided link (of racing
   * callers with one link exactly one succeeds; the others get that 400 and their password is not set).
   */
  async reset(token: string, newPassword: string, clientAddress: string): Promise<ResetDone> {
    await this.throttle(clientAddress);
    if (newPassword.length < MIN_PASSWORD_LENGTH) throw badRequest(`the new password needs at least ${MIN_PASSWORD_LENGTH} characters`);
    const key = linkKey(token);
    if (key === undefined) throw badRequest(BAD_RESET_LINK);
    const { store, clock } = this.d;
    // Only a live link costs an argon2 hash: random tokens cannot make the service hash.
    if (!(await store.emailTokens.peek(key, 'reset_password', clock.now()))) throw badRequest(BAD_RESET_LINK);
    const passwordHash = await hashPassword(newPassword);
    const now = clock.now();
    const done = await store.transaction(async (repos) => {
      const link = await repos.emailTokens.consume(key, 'reset_password', now, { sameEmail: true });
      if (!link) return undefined;
      await repos.users.update(link.userId, { passwordHash });
      await repos.sessions.deleteForUser(link.userId);
      await repos.emailTokens.revokeForUser(link.userId, 'reset_password', now);
      await repos.activity.add({ userId: link.userId, agentId: null, site: null, action: 'password.reset', detail: { email: link.email, sessions_ended: true }, ip: clientAddress, createdAt: now });
      return link;
    });
    if (!done) throw badRequest(BAD_RESET_LINK);
    await this.d.notices.security(
      done.userId,
      'Password changed',
      `Your password was reset with a link mailed to ${done.email}, and every device was signed out. Not you? Sign in with a passkey, change your password and check Activity.`,
    );
    return { password_reset: true, email: done.email, signed_in: false, next_step: 'sign in with your email address and the new password' };
  }

  /** Off the request's path: a link for a verified address's account, voiding its older ones; nothing otherwise. */
  private async mailLink(address: string, clientAddress: string): Promise<void> {
    const { store, clock, mailer, baseUrl } = this.d;
    const user = await store.users.byEmail(address);
    if (!user || !user.emailVerified) return;
    const now = clock.now();
    await store.transaction(async (repos) => {
      await repos.emailTokens.revokeForUser(user.id, 'reset_password', now);
      const { token, expiresAt } = await issueLink(repos, now, { purpose: 'reset_password', userId: user.id, email: user.email, subject: null, lifetimeMs: RESET_LINK_LIFETIME_SEC * 1000 });
      const mail = passwordResetMail({ to: user.email, link: linkUrl(baseUrl, RESET_PATH, token), minutes: RESET_LINK_LIFETIME_SEC / 60, baseUrl });
      await mailer.queue({ userId: user.id, kind: 'password_reset', mail, expiresAt }, repos);
      await repos.activity.add({ userId: user.id, agentId: null, site: null, action: 'password.reset_requested', detail: {}, ip: clientAddress, createdAt: now });
    });
    mailer.wake();
  }

  private throttle(clientAddress: string): Promise<void> {
    return this.d.limiter.check(LINK_ATTEMPTS.keyFor(clientAddress), LINK_ATTEMPTS.perAddress, LINK_ATTEMPTS.windowSec);
  }
}
