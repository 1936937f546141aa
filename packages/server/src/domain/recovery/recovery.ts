/**
 * Account recovery (decisions §14), for an owner who lost every passkey: one-time recovery codes
 * made in advance, and an SMS code to the account's verified phone. Completing needs both, plus a
 * new password; it signs in with a `recovery` session (which may add a passkey: the account has
 * none left; approving still needs one), ends every other session, removes every passkey, unlinks
 * every identity provider (a linked one signs in and approves, so it is a credential like a
 * passkey: whoever holds it must not outlive a recovery) and sets the password. An attacker then
 * needs the owner's email, phone (the SIM), and a recovery code.
 *
 * `start` answers the same, in about the same time, whether or not the account and phone matched:
 * both paths hash, write a code row (a matchless one is void from birth) and then wait out a
 * common floor, so neither the answer nor its timing says whether an address has an account or
 * which phone it has. Guessing is bounded everywhere: starts per client, per address and per
 * number; 5 tries per start, after which the start is void; completions per client.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { codeHash, randomBase32, randomDigits, sameHash } from '../../crypto/one-time-codes.ts';
import { hashPassword } from '../../crypto/password.ts';
import type { Repos, Store } from '../../store/ports/index.ts';
import type { Clock } from '../../clock.ts';
import type { RateLimiter } from '../rate-limit.ts';
import { checkClient } from '../client-limit.ts';
import type { SmsQueue } from '../sms/sms-queue.ts';
import type { Notifier } from '../notifications/notifier.ts';
import { type Accounts, type CurrentSession, type SignedIn, normalizeEmail } from '../accounts/accounts.ts';
import { AppError, forbidden } from '../errors.ts';
import { newId } from '../ids.ts';
import { mayManagePasskeys } from '../passkeys/passkey-policy.ts';
import { maskPhone, normalizePhone } from '../phone/phone-number.ts';
import { PHONE_CODE } from '../phone/phone.ts';

export const RECOVERY_CODES = { count: 10, length: 12 } as const;
/** Starts: per client address (and IPv6 network), per email address and per phone number, per hour. */
export const RECOVERY_START_LIMIT = { perAddress: 10, perNetwork: 30, perAccount: 5, windowSec: 3600 } as const;
/** Completions per client address per hour (each start also allows only PHONE_CODE.attempts tries). */
export const RECOVERY_COMPLETE_LIMIT = { perAddress: 20, perNetwork: 60, windowSec: 3600 } as const;
/** Every start answers no sooner than this after it began, matched or not (wall time, not the Clock). */
export const START_FLOOR_MS = 300;

/** The one answer to any wrong completion: it never says which part was wrong. */
export const RECOVERY_FAILED =
  'recovery failed: the email, SMS code or recovery code does not match, or the SMS code expired (10 minutes) or ran out of tries (5). Check them and try again, or start over to get a new SMS code';
const failed = () => new AppError(401, RECOVERY_FAILED, { next_step: 'POST /api/recovery/start again for a new SMS code; each recovery code works once' });

export const recoveryCodeText = (code: string): string => `Your Mandate recovery code: ${code}. It expires in 10 minutes. Someone is recovering your account; if it is not you, ignore this and keep your recovery codes safe.`;

/** Recovery codes as typed: case, spaces and dashes do not matter. */
export const normalizeRecoveryCode = (code: string): string => code.toUpperCase().replace(/[\s-]/g, '');
/** Shown in groups of four: ABCD-EFGH-JKLM. */
const formatCode = (code: string): string => code.match(/.{1,4}/g)?.join('-') ?? code;

export const PASSKEY_SESSION_FOR_CODES = 'sign in with one of your passkeys to make new recovery codes';

export interface RecoveryDeps {
  store: Store;
  clock: Clock;
  limiter: RateLimiter;
  sms: SmsQueue;
  notices: Pick<Notifier, 'security'>;
  accounts: Pick<Accounts, 'startSession'>;
  /** What the owner knows a configured identity provider as (OAUTH_<NAME>_LABEL); its name when unknown. */
  providerLabel?: (name: string) => string;
  /** Tests may shorten it; the service uses START_FLOOR_MS. */
  startFloorMs?: number;
}

/** Runs inside a completed recovery's transaction (see `onCompleted`). */
export type RecoveryHook = (repos: Repos, userId: string, now: number) => Promise<void>;

export class Recovery {
  private readonly completedHooks: RecoveryHook[] = [];

  constructor(private readonly d: RecoveryDeps) {}

  /**
   * Work that must happen with a recovery, in its transaction (a failure rolls the recovery back):
   * the seam for other ways in that approve or sign in (linked identity providers, say), which a
   * recovery should end as it ends sessions and passkeys.
   */
  onCompleted(hook: RecoveryHook): void {
    this.completedHooks.push(hook);
  }

  /**
   * POST /api/recovery/codes: 10 new codes, shown once; the old set stops working. Once the account
   * has a passkey, only a passkey session may (a stolen password must not mint codes that undo
   * the passkeys); before, any session.
   */
  async generate(session: Pick<CurrentSession, 'user' | 'method'>, ip: string): Promise<{ codes: string[] }> {
    const { store, clock } = this.d;
    const userId = session.user.id;
    const passkeys = (await store.passkeys.listForUser(userId)).length;
    if (!mayManagePasskeys(session.method, passkeys)) {
      throw forbidden(PASSKEY_SESSION_FOR_CODES, { next_step: 'sign in with a passkey (GET /api/webauthn/login/options, then POST /api/webauthn/login/verify) and repeat this request with that session' });
    }
    const codes = Array.from({ length: RECOVERY_CODES.count }, () => randomBase32(RECOVERY_CODES.length));
    const now = clock.now();
    await store.transaction(async (repos) => {
      await repos.recoveryCodes.replace(userId, codes.map((c) => codeHash(userId, c)), now);
      await repos.activity.add({ userId, agentId: null, site: null, action: 'recovery.codes_generated', detail: { count: codes.length }, ip, createdAt: now });
    });
    await this.d.notices.security(userId, 'New recovery codes', 'New recovery codes were made for your account; the old ones no longer work. Not you? Sign in with your passkey, make new codes and change your password.');
    return { codes: codes.map(formatCode) };
  }

  /** POST /api/recovery/start: always `{sent: true}`, see the file's comment. */
  async start(input: { email: string; phone: string }, ip: string): Promise<{ sent: true }> {
    const began = performance.now();
    const { store, clock, limiter, sms } = this.d;
    await checkClient(limiter, 'recovery-start', ip, RECOVERY_START_LIMIT);
    const email = normalizeEmail(input.email);
    const phone = normalizePhone(input.phone);
    await limiter.check(`recovery-start:email:${email}`, RECOVERY_START_LIMIT.perAccount, RECOVERY_START_LIMIT.windowSec);
    await limiter.check(`recovery-start:phone:${phone}`, RECOVERY_START_LIMIT.perAccount, RECOVERY_START_LIMIT.windowSec);
    const user = await store.users.byEmail(email);
    const matched = user && user.phoneVerified && user.phone === phone ? user : undefined;
    const now = clock.now();
    const code = randomDigits(PHONE_CODE.digits);
    const id = newId('pc');
    const expiresAt = now + PHONE_CODE.lifetimeSec * 1000;
    const hash = codeHash(id, code);
    await store.transaction(async (repos) => {
      // The same statements on both paths: unmatched, the revocation names an account that cannot exist (the new row's id).
      await repos.phoneCodes.revokeForUser(matched?.id ?? id, 'recovery', now);
      // A start that matched nothing is written too, with no account and no tries: it can never complete.
      await repos.phoneCodes.create({ id, userId: matched?.id ?? null, purpose: 'recovery', phone, codeHash: hash, attemptsLeft: matched ? PHONE_CODE.attempts : 0, createdAt: now, expiresAt });
      if (!matched) return;
      await sms.queue({ userId: matched.id, kind: 'recovery_code', sms: { to: phone, text: recoveryCodeText(code) }, expiresAt }, repos);
      await repos.activity.add({ userId: matched.id, agentId: null, site: null, action: 'recovery.started', detail: { phone: maskPhone(phone) }, ip, createdAt: now });
    });
    if (matched) {
      sms.wake();
      await this.d.notices.security(matched.id, 'Account recovery started', `A recovery code was texted to ${maskPhone(phone)}. Not you? Your account stays safe without that code and a recovery code; sign in with your passkey and make new recovery codes.`);
    }
    const wait = (this.d.startFloorMs ?? START_FLOOR_MS) - (performance.now() - began);
    if (wait > 0) await sleep(wait);
    return { sent: true };
  }

  /**
   * POST /api/recovery/complete. Takes one of the start's 5 tries first (conditional UPDATE), then
   * compares the SMS code in constant time and looks the recovery code up by its hash; any wrong
   * part gives the same 401. On success, in one transaction: the start and the recovery code are
   * consumed (conditional UPDATEs: of racing completions one wins, and a failure rolls both back),
   * the password is set, every session, passkey and linked identity provider of the account is
   * removed. Then a `recovery` session is made. Every wrong try is recorded in Activity.
   */
  async complete(input: { email: string; sms_code: string; recovery_code: string; new_password: string }, ip: string): Promise<SignedIn> {
    const { store, clock, limiter } = this.d;
    await checkClient(limiter, 'recovery-complete', ip, RECOVERY_COMPLETE_LIMIT);
    const user = await store.users.byEmail(normalizeEmail(input.email));
    const now = clock.now();
    const live = user ? await store.phoneCodes.live(user.id, 'recovery', now) : undefined;
    if (!user || !live) throw failed();
    const tried = await store.phoneCodes.takeAttempt(live.id, now);
    if (!tried) throw failed();
    const smsCode = input.sms_code.trim();
    const smsOk = /^\d{6}$/.test(smsCode) && sameHash(tried.codeHash, codeHash(tried.id, smsCode));
    const recoveryHash = codeHash(user.id, normalizeRecoveryCode(input.recovery_code));
    const codeOk = await store.recoveryCodes.has(user.id, recoveryHash);
    if (!smsOk || !codeOk) {
      // Each wrong try is the owner's to see (someone holds their email and is guessing); which part
      // was wrong and what was typed stay out, as they stay out of the answer. Only tries that took
      // one of a live start's 5 are recorded (starts are 5 per email per hour), so nobody can fill an
      // owner's trail by posting completions with no start.
      await store.activity.add({ userId: user.id, agentId: null, site: null, action: 'recovery.failed', detail: { attempts_left: tried.attemptsLeft }, ip, createdAt: now });
      if (tried.attemptsLeft === 0) await this.exhausted(user.id, ip);
      throw failed();
    }
    const passwordHash = await hashPassword(input.new_password);
    const { passkeys: removed, providers } = await store.transaction(async (repos) => {
      if (!(await repos.phoneCodes.consume(tried.id, now))) throw failed();
      // Throwing here rolls the start's consumption back with it.
      if (!(await repos.recoveryCodes.consume(user.id, recoveryHash, now))) throw failed();
      await repos.users.update(user.id, { passwordHash });
      await repos.sessions.deleteForUser(user.id);
      const passkeys = await repos.passkeys.deleteCreatedSince(user.id, 0);
      // Linked identity providers go with the passkeys: each signs in and approves on its own. Flows
      // under way go too, so a link begun before the recovery cannot finish after it.
      const linked = (await repos.oauthIdentities.listForUser(user.id)).map((i) => i.provider);
      await repos.oauthIdentities.deleteForUser(user.id);
      await repos.oauthStates.deleteForUser(user.id);
      await repos.phoneCodes.revokeForUser(user.id, 'recovery', now);
      for (const hook of this.completedHooks) await hook(repos, user.id, now);
      const codesLeft = await repos.recoveryCodes.countUnused(user.id);
      await repos.activity.add({ userId: user.id, agentId: null, site: null, action: 'recovery.completed', detail: { passkeys_removed: passkeys.length, identity_providers_unlinked: linked, recovery_codes_left: codesLeft }, ip, createdAt: now });
      return { passkeys: passkeys.length, providers: linked };
    });
    const label = this.d.providerLabel ?? ((name: string) => name);
    const unlinked = providers.length === 0 ? '' : ` and ${providers.map(label).join(', ')} ${providers.length === 1 ? 'was' : 'were'} unlinked (link ${providers.length === 1 ? 'it' : 'them'} again in Account if you want to sign in with ${providers.length === 1 ? 'it' : 'them'})`;
    await this.d.notices.security(user.id, 'Account recovered', `Your account was recovered with an SMS code and a recovery code: the password was changed, every other session ended, ${removed} passkey${removed === 1 ? ' was' : 's were'} removed${unlinked}. Add a new passkey now. Not you? Contact the operator of this service at once.`);
    return this.d.accounts.startSession({ ...user, passwordHash }, 'recovery');
  }

  private async exhausted(userId: string, ip: string): Promise<void> {
    await this.d.store.activity.add({ userId, agentId: null, site: null, action: 'recovery.attempts_exhausted', detail: { attempts: PHONE_CODE.attempts }, ip, createdAt: this.d.clock.now() });
    await this.d.notices.security(userId, 'Account recovery blocked', `Someone tried ${PHONE_CODE.attempts} wrong codes to recover your account; that recovery no longer works. If it was not you, your phone number may be known: keep your recovery codes safe.`);
  }
}
