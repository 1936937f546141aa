/**
 * Email verification (decisions §25). `send` mails a single-use link valid 24 hours to the
 * account's current address; the page behind it (`preview`) only shows what the link is for, since
 * mail scanners open links; `verify` consumes it, in one transaction with marking the address
 * verified, and only while the account still has the address the link went to. Until then
 * `user:email` is neither offered nor released (user-info.ts), the OIDC `email` scope releases
 * nothing, and ADMIN_EMAILS gives no admin role.
 */
import type { UserRecord } from '../../store/ports/index.ts';
import { badRequest, conflict } from '../errors.ts';
import { verifyEmailMail } from '../mail/mail-texts.ts';
import { LINK_ATTEMPTS, LINK_LIFETIME_SEC, issueLink, linkKey, linkUrl } from './email-links.ts';
import { type ChangingSession, type EmailChangeDeps, type EmailChangeInput, changeEmail } from './email-change.ts';

/** Verification mails per account per hour. */
export const EMAIL_SEND_LIMIT = { perAccount: 5, windowSec: 3600 } as const;
export const VERIFY_PATH = '/api/email/verify';

export const BAD_VERIFY_LINK =
  'this verification link is not valid: it was already used, it expired (links last 24 hours), or the account\'s address changed since it was sent. Send a new link from the app (Account, Verify email)';

export type EmailVerificationDeps = EmailChangeDeps;

export class EmailVerification {
  private readonly verifiedHooks: ((userId: string) => Promise<void>)[] = [];

  constructor(private readonly d: EmailVerificationDeps) {}

  /** Runs after an address is verified (first-passkey.ts mails an undo link it could not send before). */
  onVerified(hook: (userId: string) => Promise<void>): void {
    this.verifiedHooks.push(hook);
  }

  /** POST /api/email/send: 409 when already verified; 429 past EMAIL_SEND_LIMIT. */
  async send(user: UserRecord): Promise<{ sent: true; to: string; expires_in: number }> {
    if (user.emailVerified) throw conflict('your email address is already verified');
    await this.d.limiter.check(`email-send:${user.id}`, EMAIL_SEND_LIMIT.perAccount, EMAIL_SEND_LIMIT.windowSec);
    const { store, clock, mailer, baseUrl } = this.d;
    await store.transaction(async (repos) => {
      const { token, expiresAt } = await issueLink(repos, clock.now(), { purpose: 'verify_email', userId: user.id, email: user.email, subject: null });
      const mail = verifyEmailMail({ to: user.email, link: linkUrl(baseUrl, VERIFY_PATH, token), hours: LINK_LIFETIME_SEC / 3600, baseUrl });
      await mailer.queue({ userId: user.id, kind: 'email_verify', mail, expiresAt }, repos);
    });
    mailer.wake();
    return { sent: true, to: user.email, expires_in: LINK_LIFETIME_SEC };
  }

  /** What the page behind a link shows, without using it: the address, or undefined when the link is not valid. */
  async preview(token: string, clientAddress: string): Promise<{ email: string } | undefined> {
    await this.throttle(clientAddress);
    const key = linkKey(token);
    if (key === undefined) return undefined;
    const link = await this.d.store.emailTokens.peek(key, 'verify_email', this.d.clock.now());
    if (!link) return undefined;
    const user = await this.d.store.users.byId(link.userId);
    return user && user.email === link.email ? { email: link.email } : undefined;
  }

  /**
   * POST /api/email/verify: consumes the link and marks the address verified, in one transaction.
   * Of racing confirmations of one link exactly one succeeds; the others get the same 400 as a used link.
   */
  async verify(token: string, clientAddress: string): Promise<{ email_verified: true; email: string }> {
    await this.throttle(clientAddress);
    const key = linkKey(token);
    if (key === undefined) throw badRequest(BAD_VERIFY_LINK);
    const now = this.d.clock.now();
    const verified = await this.d.store.transaction(async (repos) => {
      const link = await repos.emailTokens.consume(key, 'verify_email', now, { sameEmail: true });
      if (!link || !(await repos.users.markEmailVerified(link.userId, link.email, now))) return undefined;
      // Other links sent for the address have nothing left to do.
      await repos.emailTokens.revokeForUser(link.userId, 'verify_email', now);
      await repos.activity.add({ userId: link.userId, agentId: null, site: null, action: 'email.verified', detail: { email: link.email }, ip: clientAddress, createdAt: now });
      return { userId: link.userId, email: link.email };
    });
    if (verified === undefined) throw badRequest(BAD_VERIFY_LINK);
    for (const hook of this.verifiedHooks) await hook(verified.userId);
    return { email_verified: true, email: verified.email };
  }

  /** PATCH /api/me `{email}`: see email-change.ts. */
  change(session: ChangingSession, input: EmailChangeInput, clientAddress: string): Promise<UserRecord> {
    return changeEmail(this.d, session, input, clientAddress);
  }

  private throttle(clientAddress: string): Promise<void> {
    return this.d.limiter.check(LINK_ATTEMPTS.keyFor(clientAddress), LINK_ATTEMPTS.perAddress, LINK_ATTEMPTS.windowSec);
  }
}
