/**
 * Changing the account's email (PATCH /api/me `{email}`, decisions §25: changing it starts over).
 * The new address is unverified, links sent to the old one stop working, and the old address, when
 * it was verified, is told. A password session must show the current password (a stolen session
 * alone must not move the account's mail elsewhere); a passkey session need not.
 */
import { verifyPassword } from '../../crypto/password.ts';
import type { SessionMethod, Store, UserRecord } from '../../store/ports/index.ts';
import type { Clock } from '../../clock.ts';
import { conflict, forbidden, unauthorized } from '../errors.ts';
import type { RateLimiter } from '../rate-limit.ts';
import type { Mailer } from '../mail/mailer.ts';
import { emailChangedMail } from '../mail/mail-texts.ts';
import { normalizeEmail } from './accounts.ts';

/** Email changes (and so password checks through this route) per account per hour. */
export const EMAIL_CHANGE_LIMIT = { perAccount: 10, windowSec: 3600 } as const;
const TAKE_OVER_NEXT_STEP = 'if the address is yours, sign up with it (POST /api/users): a link mailed to it lets you take it, verified, for the new account';
const NEXT_STEP = 'send `current_password` (your password) with the new `email`, or sign in with a passkey and change the address from that session';

export interface EmailChangeDeps {
  store: Store;
  clock: Clock;
  limiter: RateLimiter;
  mailer: Mailer;
  baseUrl: string;
}

export interface EmailChangeInput {
  email: string;
  currentPassword?: string;
}

/** The signed-in session that changes the address (an OwnerContext fits). */
export interface ChangingSession {
  user: UserRecord;
  method: SessionMethod;
}

export async function changeEmail(d: EmailChangeDeps, session: ChangingSession, input: EmailChangeInput, clientAddress: string): Promise<UserRecord> {
  const { user } = session;
  const email = normalizeEmail(input.email);
  if (email === user.email) return user;
  await d.limiter.check(`email-change:${user.id}`, EMAIL_CHANGE_LIMIT.perAccount, EMAIL_CHANGE_LIMIT.windowSec);
  if (session.method !== 'passkey') {
    if (input.currentPassword === undefined) throw forbidden('changing your email address needs your current password', { next_step: NEXT_STEP });
    if (!(await verifyPassword(user.passwordHash, input.currentPassword))) throw forbidden('current_password is not your password', { next_step: NEXT_STEP });
  }
  // Outside a transaction: one conditional statement, and a taken address is an answer, not an error.
  if (!(await d.store.users.changeEmail(user.id, email))) {
    // An address held without being verified can be taken, but by a sign-up (address-takeover.ts), not by moving this account onto it.
    const holder = await d.store.users.byEmail(email);
    if (holder && !holder.emailVerified) throw conflict('another account uses this email address (it never verified it); choose another one', { next_step: TAKE_OVER_NEXT_STEP });
    throw conflict('another account already uses this email address; choose another one');
  }
  const now = d.clock.now();
  await d.store.transaction(async (repos) => {
    await repos.emailTokens.revokeForUser(user.id, 'verify_email', now);
    await repos.activity.add({ userId: user.id, agentId: null, site: null, action: 'email.changed', detail: { from: user.email, to: email, was_verified: user.emailVerified }, ip: clientAddress, createdAt: now });
    if (user.emailVerified) {
      await d.mailer.queue({ userId: user.id, kind: 'email_changed', mail: emailChangedMail({ to: user.email, newEmail: email, at: now, baseUrl: d.baseUrl }), expiresAt: null }, repos);
    }
  });
  if (user.emailVerified) d.mailer.wake();
  const updated = await d.store.users.byId(user.id);
  if (!updated) throw unauthorized();
  return updated;
}
