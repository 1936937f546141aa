/**
 * The owner's phone (decisions §14): `send` texts a 6-digit code (valid 10 minutes, 5 tries, at
 * most 5 sends per account per hour) to the number to verify; `verify` checks it and makes the
 * number the account's verified phone; `unlink` removes it. The number is the account's only once
 * verified: until then it lives in the code's row, so a typo never replaces a verified phone.
 * While verified, `user:phone` can be offered and released (user-info.ts, oidc/scopes.ts, both read
 * at each pass or token); after unlinking, the next pass and the next userinfo carry none.
 */
import { codeHash, randomDigits, sameHash } from '../../crypto/one-time-codes.ts';
import type { Store, UserRecord } from '../../store/ports/index.ts';
import type { Clock } from '../../clock.ts';
import type { RateLimiter } from '../rate-limit.ts';
import type { SmsQueue } from '../sms/sms-queue.ts';
import type { Notifier } from '../notifications/notifier.ts';
import { badRequest, conflict } from '../errors.ts';
import { newId } from '../ids.ts';
import { maskPhone, normalizePhone } from './phone-number.ts';

export const PHONE_CODE = { digits: 6, lifetimeSec: 600, attempts: 5 } as const;
/** Codes sent per account per hour (verification and recovery count apart). */
export const PHONE_SEND_LIMIT = { perAccount: 5, windowSec: 3600 } as const;

export const NO_PHONE_CODE = 'no code is waiting for this number: it expired (codes last 10 minutes), was used up (5 tries), or a newer one was sent. Send a new code';
const WRONG_CODE = (left: number): string => (left > 0 ? `wrong code: ${left} ${left === 1 ? 'try' : 'tries'} left` : 'wrong code: that was the last try, the code no longer works. Send a new code');

export const phoneCodeText = (code: string): string => `Your Mandate code: ${code}. It expires in 10 minutes. Do not share it.`;

export interface PhoneDeps {
  store: Store;
  clock: Clock;
  limiter: RateLimiter;
  sms: SmsQueue;
  notices: Pick<Notifier, 'security'>;
}

export class Phone {
  constructor(private readonly d: PhoneDeps) {}

  /** POST /api/phone/send. 400 for a number that is not one; 409 when it is already the verified phone; 429 past the limit. */
  async send(user: UserRecord, rawPhone: string, ip: string): Promise<{ sent: true; phone: string; expires_in: number }> {
    const phone = normalizePhone(rawPhone);
    if (user.phoneVerified && user.phone === phone) throw conflict('this number is already your verified phone');
    await this.d.limiter.check(`phone-send:${user.id}`, PHONE_SEND_LIMIT.perAccount, PHONE_SEND_LIMIT.windowSec);
    const { store, clock, sms } = this.d;
    const now = clock.now();
    const code = randomDigits(PHONE_CODE.digits);
    const id = newId('pc');
    const expiresAt = now + PHONE_CODE.lifetimeSec * 1000;
    await store.transaction(async (repos) => {
      // One code at a time: a new one voids the older ones (and their tries).
      await repos.phoneCodes.revokeForUser(user.id, 'verify_phone', now);
      await repos.phoneCodes.create({ id, userId: user.id, purpose: 'verify_phone', phone, codeHash: codeHash(id, code), attemptsLeft: PHONE_CODE.attempts, createdAt: now, expiresAt });
      await sms.queue({ userId: user.id, kind: 'phone_code', sms: { to: phone, text: phoneCodeText(code) }, expiresAt }, repos);
      await repos.activity.add({ userId: user.id, agentId: null, site: null, action: 'phone.code_sent', detail: { phone: maskPhone(phone) }, ip, createdAt: now });
    });
    sms.wake();
    return { sent: true, phone: maskPhone(phone) ?? '', expires_in: PHONE_CODE.lifetimeSec };
  }

  /**
   * POST /api/phone/verify. Each call takes one of the code's 5 tries first (one conditional
   * UPDATE), then compares hashes in constant time; the right code is consumed (conditional UPDATE:
   * of racing right answers one wins) in the transaction that sets the phone.
   */
  async verify(user: UserRecord, rawPhone: string, code: string, ip: string): Promise<{ phone_verified: true; phone: string }> {
    const phone = normalizePhone(rawPhone);
    const { store, clock } = this.d;
    const now = clock.now();
    const live = await store.phoneCodes.live(user.id, 'verify_phone', now);
    if (!live || live.phone !== phone) throw badRequest(NO_PHONE_CODE, { next_step: 'POST /api/phone/send with this number' });
    const tried = await store.phoneCodes.takeAttempt(live.id, now);
    if (!tried) throw badRequest(NO_PHONE_CODE, { next_step: 'POST /api/phone/send with this number' });
    if (!/^\d{6}$/.test(code) || !sameHash(tried.codeHash, codeHash(tried.id, code))) throw badRequest(WRONG_CODE(tried.attemptsLeft));
    const done = await store.transaction(async (repos) => {
      if (!(await repos.phoneCodes.consume(tried.id, now))) return false;
      await repos.users.update(user.id, { phone, phoneVerified: true });
      await repos.activity.add({ userId: user.id, agentId: null, site: null, action: 'phone.verified', detail: { phone: maskPhone(phone) }, ip, createdAt: now });
      return true;
    });
    if (!done) throw badRequest(NO_PHONE_CODE, { next_step: 'POST /api/phone/send with this number' });
    await this.d.notices.security(user.id, 'Phone number verified', `${maskPhone(phone)} is now your verified phone: it can recover your account and be shared with sites you approve. Not you? Remove it under Account and change your password.`);
    return { phone_verified: true, phone: maskPhone(phone) ?? '' };
  }

  /** DELETE /api/phone: the phone is gone at once (the next pass and userinfo carry no `user:phone`); pending codes end. */
  async unlink(user: UserRecord, ip: string): Promise<{ phone: null; phone_verified: false }> {
    const { store, clock } = this.d;
    const now = clock.now();
    const had = user.phone;
    await store.transaction(async (repos) => {
      await repos.users.update(user.id, { phone: null, phoneVerified: false });
      await repos.phoneCodes.revokeForUser(user.id, 'verify_phone', now);
      await repos.phoneCodes.revokeForUser(user.id, 'recovery', now);
      if (had) await repos.activity.add({ userId: user.id, agentId: null, site: null, action: 'phone.removed', detail: { phone: maskPhone(had) }, ip, createdAt: now });
    });
    if (had) await this.d.notices.security(user.id, 'Phone number removed', `${maskPhone(had)} is no longer on your account: it cannot recover the account and is not shared with sites. Not you? Change your password and add your phone again.`);
    return { phone: null, phone_verified: false };
  }
}
