/**
 * Taking an address back from an account that never proved it (issue 22, hardening).
 *
 * Anyone may sign up with any address; only its holder can verify it (decisions §25). So a stranger
 * who signs up first with an address named in ADMIN_EMAILS (or anyone's) would block its holder's
 * own sign-up for ever with a 409. Now a sign-up with an address that an account holds WITHOUT
 * having verified it is accepted as pending: nothing is created, a single-use link (24 hours) is
 * mailed to the address, and opening it proves the person reads that address's mail. In one
 * transaction, then, the claim is used, the address is taken from the unverified account, and the
 * new account is made with the address, verified. An address a verified account holds is refused
 * (409) as before, and no mail goes out.
 *
 * Confirming needs the link AND the password chosen at sign-up: the mailbox and the sign-up must be
 * one person. Otherwise a stranger could sign up with the address of someone who has an unverified
 * account, and that person, taking the mail for their own verification, would hand the stranger a
 * verified account with their address. (Attempts per link are limited: CLAIM_CONFIRMS_PER_LINK.)
 *
 * What the account that lost the address keeps: its own things (agents, grants, passkeys), nothing
 * tied to the address. Its address becomes a random unroutable placeholder (so neither it nor anyone
 * signs in to it with the address or a password; a passkey still signs its owner in, who can then set
 * an address of their own), every session of it ends, its unused verification links end, and its
 * activity says the address was taken (without the taker's client address). The new account starts
 * empty: nothing of the other account passes to it.
 *
 * Races: the claim is used by one conditional UPDATE, the address released by another (only while
 * unverified), and the new account inserted under the unique index on email, all in one transaction.
 * Of two claims racing for one address exactly one makes its account; the other is rolled back
 * (its link used up nothing) and answered 409. Sign-in by email stays unambiguous: an address is on
 * one account at any moment.
 */
import { verifyPassword } from '../../crypto/password.ts';
import { randomToken, sha256Hex } from '../../crypto/random.ts';
import type { Store, UserRecord } from '../../store/ports/index.ts';
import type { Clock } from '../../clock.ts';
import { badRequest, conflict, forbidden } from '../errors.ts';
import { newId } from '../ids.ts';
import { takeoverMail } from '../mail/mail-texts.ts';
import type { Mailer } from '../mail/mailer.ts';
import type { RateLimiter } from '../rate-limit.ts';
import { LINK_ATTEMPTS, LINK_LIFETIME_MS, LINK_LIFETIME_SEC, linkKey, linkUrl } from './email-links.ts';

export const CLAIM_PATH = '/api/email/claim';
/** Take-over mails to one address per hour: nobody can flood an inbox by signing up with its address. */
export const CLAIM_MAIL_LIMIT = { perAddress: 3, windowSec: 3600 } as const;
/** Confirmations per link, right password or wrong: a person needs one or two; a guesser gets no more. */
export const CLAIM_CONFIRMS_PER_LINK = 10;
/** Where an address taken from an account goes: `.invalid` never resolves (RFC 2606), the random part is never told. */
export const RELEASED_DOMAIN = 'address-taken.invalid';

export const HELD_BY_VERIFIED = 'an account with this email already exists and has verified it; sign in instead';
const HELD_NEXT_STEP = 'sign in with this address (POST /api/login, or a passkey); if the account is not yours, use another address';
export const BAD_CLAIM_LINK =
  'this link is not valid: it was already used or it expired (links last 24 hours). Sign up again with the address to get a new one';
export const CLAIM_LOST = 'another account verified this address first; sign in with it, or sign up with another address';
export const WRONG_CLAIM_PASSWORD = 'this is not the password chosen at the sign-up this link is for';
const WRONG_PASSWORD_NEXT_STEP = 'enter the password you chose when you signed up with this address; if you did not sign up, ignore the mail: nothing changes without the link and that password';

/** The answer to a sign-up that is waiting for the address's holder to open the mailed link. */
export interface PendingSignUp {
  pending: true;
  email: string;
  expires_in: number;
  detail: string;
  next_step: string;
}

export interface ClaimedAddress {
  email_verified: true;
  email: string;
  account_created: true;
  next_step: string;
}

export interface AddressTakeoverDeps {
  store: Store;
  clock: Clock;
  limiter: RateLimiter;
  mailer: Mailer;
  baseUrl: string;
  /** Makes the new account's record (accounts.ts), so a claimed sign-up is the same account a plain one is. */
  newUser: (o: { email: string; passwordHash: string; displayName: string; createdAt: number }) => UserRecord;
}

export class AddressTakeover {
  constructor(private readonly d: AddressTakeoverDeps) {}

  /**
   * A sign-up found `email` taken. Held by a verified account (or by nobody any more, a race): 409.
   * Held by an unverified one: mails the take-over link and answers pending.
   */
  async offerToSignUp(input: { email: string; passwordHash: string; displayName: string }): Promise<PendingSignUp> {
    const holder = await this.d.store.users.byEmail(input.email);
    // Gone since the insert failed (a take-over or change in between): nothing to take; try again.
    if (!holder) throw conflict('this address changed hands a moment ago; try again', { next_step: 'send the sign-up again' });
    if (holder.emailVerified) throw conflict(HELD_BY_VERIFIED, { next_step: HELD_NEXT_STEP });
    await this.d.limiter.check(`email-claim:${sha256Hex(input.email)}`, CLAIM_MAIL_LIMIT.perAddress, CLAIM_MAIL_LIMIT.windowSec);
    const { passwordHash } = input;
    const token = randomToken(32);
    const now = this.d.clock.now();
    const expiresAt = now + LINK_LIFETIME_MS;
    const { store, mailer, baseUrl } = this.d;
    await store.transaction(async (repos) => {
      await repos.emailClaims.create({ tokenHash: sha256Hex(token), email: input.email, signUp: { passwordHash, displayName: input.displayName }, createdAt: now, expiresAt });
      const mail = takeoverMail({ to: input.email, link: linkUrl(baseUrl, CLAIM_PATH, token), hours: LINK_LIFETIME_SEC / 3600, baseUrl });
      // Tied to no account: the unverified holder must never see this mail (nor its link) in anything of theirs.
      await mailer.queue({ userId: null, kind: 'email_claim', mail, expiresAt }, repos);
    });
    mailer.wake();
    return {
      pending: true,
      email: input.email,
      expires_in: LINK_LIFETIME_SEC,
      detail: 'another account uses this address but has never verified it. We mailed a link to the address: opening it (with the password you just chose) proves it is yours, creates your account with it, verified, and takes it from the other account. If that other account is yours, sign in to it and verify the address there instead',
      next_step: `open the link mailed to ${input.email} within 24 hours, then sign in with this address and the password you chose`,
    };
  }

  /** The page behind the link: the address it would take, or undefined when the link is not valid. Uses nothing. */
  async preview(token: string, clientAddress: string): Promise<{ email: string } | undefined> {
    await this.throttle(clientAddress);
    const key = linkKey(token);
    if (key === undefined) return undefined;
    const claim = await this.d.store.emailClaims.peek(key, this.d.clock.now());
    return claim && { email: claim.email };
  }

  /**
   * POST /api/email/claim: with the sign-up's password, in one transaction, uses the link, takes the
   * address from an account that has not verified it, and makes the new account with the address
   * verified. 400 for a bad, used or expired link; 403 for another password (the link stays
   * usable); 409 when a verified account holds the address by now (nothing is used then).
   */
  async confirm(token: string, password: string, clientAddress: string): Promise<ClaimedAddress> {
    await this.throttle(clientAddress);
    const key = linkKey(token);
    if (key === undefined) throw badRequest(BAD_CLAIM_LINK);
    const now = this.d.clock.now();
    const pending = await this.d.store.emailClaims.peek(key, now);
    if (!pending) throw badRequest(BAD_CLAIM_LINK);
    await this.d.limiter.check(`email-claim-confirm:${key}`, CLAIM_CONFIRMS_PER_LINK, LINK_LIFETIME_SEC);
    if (!(await verifyPassword(pending.signUp.passwordHash, password))) throw forbidden(WRONG_CLAIM_PASSWORD, { next_step: WRONG_PASSWORD_NEXT_STEP });
    const made = await this.d.store.transaction(async (repos) => {
      const claim = await repos.emailClaims.consume(key, now);
      if (!claim) return undefined;
      const released = await repos.users.releaseUnverified(claim.email, `${randomToken(12)}@${RELEASED_DOMAIN}`.toLowerCase());
      const user = this.d.newUser({ email: claim.email, passwordHash: claim.signUp.passwordHash, displayName: claim.signUp.displayName, createdAt: now });
      // Taken by a verified account meanwhile: thrown, so the transaction (and the claim's use) rolls back.
      if (!(await repos.users.create(user)) || !(await repos.users.markEmailVerified(user.id, claim.email, now))) throw conflict(CLAIM_LOST);
      if (released !== undefined) {
        await repos.sessions.deleteForUser(released);
        await repos.emailTokens.revokeForUser(released, 'verify_email', now);
        await repos.activity.add({ userId: released, agentId: null, site: null, action: 'email.taken_over', detail: { email: claim.email }, ip: null, createdAt: now });
      }
      await repos.activity.add({ userId: user.id, agentId: null, site: null, action: 'email.claimed', detail: { email: claim.email, taken_from_unverified_account: released !== undefined }, ip: clientAddress, createdAt: now });
      return user;
    });
    if (!made) throw badRequest(BAD_CLAIM_LINK);
    return { email_verified: true, email: made.email, account_created: true, next_step: 'sign in with this address and the password you chose at sign-up' };
  }

  private throttle(clientAddress: string): Promise<void> {
    return this.d.limiter.check(LINK_ATTEMPTS.keyFor(clientAddress), LINK_ATTEMPTS.perAddress, LINK_ATTEMPTS.windowSec);
  }
}
