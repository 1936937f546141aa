/**
 * The first passkey of an account (issue 14, item 7). While an account has no passkey any session
 * may add one, a password session too: nothing stronger exists yet. So whoever holds only the
 * password can enrol a passkey before the owner does, and with it approve agents. The owner is told:
 * an activity record, an inbox notice (pushed to their devices), and, when their email is verified,
 * a mail with a single-use undo link (24 hours). Undoing removes that passkey and every one enrolled
 * after it, revokes the grants they approved and ends every session of the account, in one
 * transaction; it is recorded too. The link is not bound to the account's
 * current address (the one holding the password could change it), only to the account and passkey.
 */
import type { PasskeyRecord, Repos, Store } from '../../store/ports/index.ts';
import type { Grants } from '../grants/grants.ts';
import type { Clock } from '../../clock.ts';
import { badRequest } from '../errors.ts';
import type { RateLimiter } from '../rate-limit.ts';
import type { Mailer } from '../mail/mailer.ts';
import { firstPasskeyMail, mailTime } from '../mail/mail-texts.ts';
import { LINK_ATTEMPTS, LINK_LIFETIME_SEC, issueLink, linkKey, linkUrl } from '../accounts/email-links.ts';

export const UNDO_PATH = '/api/passkeys/undo';
export const FIRST_PASSKEY_TITLE = 'A passkey was added to your account';
export const UNDO_MAILED_TITLE = 'Undo link mailed for your new passkey';
export const BAD_UNDO_LINK =
  'this undo link is not valid: it was already used or it expired (links last 24 hours). If a passkey you do not know is on your account, sign in and change your password at once';

/** How the owner is told (the Notifier fits). */
export interface SecurityNotices {
  security(userId: string, title: string, body: string): Promise<void>;
}

export interface FirstPasskeyDeps {
  store: Store;
  clock: Clock;
  limiter: RateLimiter;
  mailer: Mailer;
  notices: SecurityNotices;
  /** Revokes what the undone passkeys approved. */
  grants: Pick<Grants, 'revokeCreatedSince'>;
  baseUrl: string;
}

/** What the page behind an undo link shows before the person confirms. */
export interface UndoPreview {
  deviceId: string;
  /** The passkey's name and when it was added; null when it has been removed since. */
  passkey: { name: string; createdAt: number } | null;
}

export class FirstPasskeyNotice {
  constructor(private readonly d: FirstPasskeyDeps) {}

  /** Passkeys.onFirstRegistered. */
  async notify(passkey: PasskeyRecord): Promise<void> {
    const { store, clock, mailer, baseUrl } = this.d;
    const user = await store.users.byId(passkey.userId);
    if (!user) return;
    const now = clock.now();
    const mailed = user.emailVerified;
    await store.transaction(async (repos) => {
      await repos.activity.add({ userId: user.id, agentId: null, site: null, action: 'passkey.first_added', detail: { device_id: passkey.id, name: passkey.name, mailed }, ip: null, createdAt: now });
      if (!mailed) return;
      const { token, expiresAt } = await issueLink(repos, now, { purpose: 'undo_passkey', userId: user.id, email: user.email, subject: passkey.id });
      const mail = firstPasskeyMail({ to: user.email, name: passkey.name, at: passkey.createdAt, link: linkUrl(baseUrl, UNDO_PATH, token), hours: LINK_LIFETIME_SEC / 3600, baseUrl });
      await mailer.queue({ userId: user.id, kind: 'passkey_added', mail, expiresAt }, repos);
    });
    if (mailed) mailer.wake();
    const what = `"${passkey.name}" was added on ${mailTime(passkey.createdAt)}. It can sign in and approve requests.`;
    // Unverified: the stored text says what was true then, and asks nothing that could go stale. The
    // app asks to verify next to it only while the address is unverified (email-state.ts), and
    // verifying later sends a second notice that the undo link went out (afterEmailVerified).
    const next = mailed
      ? `Not you? Open the undo link we mailed to ${user.email} to remove it and sign out everywhere, then change your password.`
      : 'No undo link was mailed: your email address was not verified yet. Not you? Change your password at once.';
    await this.d.notices.security(user.id, FIRST_PASSKEY_TITLE, `${what} ${next}`);
  }

  /**
   * EmailVerification.onVerified: a first passkey added in the last 24 hours while the address was
   * unverified got no mail; now that the address is proven, it gets its undo link after all (the
   * notice told the owner to verify for this).
   */
  async afterEmailVerified(userId: string): Promise<void> {
    const { store, clock, mailer, baseUrl } = this.d;
    const now = clock.now();
    const [added] = await store.activity.list(userId, { before: 0, limit: 1, action: 'passkey.first_added' });
    if (!added || added.detail.mailed !== false || now - added.createdAt >= LINK_LIFETIME_SEC * 1000) return;
    const passkey = (await store.passkeys.listForUser(userId)).find((p) => p.id === added.detail.device_id);
    const user = await store.users.byId(userId);
    if (!passkey || !user?.emailVerified) return;
    await store.transaction(async (repos) => {
      const { token, expiresAt } = await issueLink(repos, now, { purpose: 'undo_passkey', userId, email: user.email, subject: passkey.id });
      const mail = firstPasskeyMail({ to: user.email, name: passkey.name, at: passkey.createdAt, link: linkUrl(baseUrl, UNDO_PATH, token), hours: LINK_LIFETIME_SEC / 3600, baseUrl });
      await mailer.queue({ userId, kind: 'passkey_added', mail, expiresAt }, repos);
      await repos.activity.add({ userId, agentId: null, site: null, action: 'passkey.undo_mailed', detail: { device_id: passkey.id }, ip: null, createdAt: now });
    });
    mailer.wake();
    // The first notice said no link was mailed: this one says it now is, so the inbox tells the whole story.
    await this.d.notices.security(userId, UNDO_MAILED_TITLE,
      `Your address ${user.email} is verified, so Mandate mailed it the link to undo adding "${passkey.name}" (valid ${LINK_LIFETIME_SEC / 3600} hours). Not you who added it? Open that link to remove it and sign out everywhere, then change your password.`);
  }

  /** The page behind the link: what undoing would remove, or undefined when the link is not valid. Uses nothing. */
  async preview(token: string, clientAddress: string): Promise<UndoPreview | undefined> {
    await this.throttle(clientAddress);
    const key = linkKey(token);
    if (key === undefined) return undefined;
    const link = await this.d.store.emailTokens.peek(key, 'undo_passkey', this.d.clock.now());
    if (!link?.subject) return undefined;
    const passkey = (await this.d.store.passkeys.listForUser(link.userId)).find((p) => p.id === link.subject);
    return { deviceId: link.subject, passkey: passkey ? { name: passkey.name, createdAt: passkey.createdAt } : null };
  }

  /**
   * POST /api/passkeys/undo: consumes the link and undoes everything that came through the first
   * passkey's trust, in one transaction: every passkey enrolled at or after it (whoever held only
   * the password could sign in with the first and enrol more), every grant approved since (only
   * those passkeys could approve), and every session. The account is left with no passkey newer
   * than the first, so its owner may enrol their own from a password session (passkey-policy.ts).
   * Of racing confirmations exactly one acts.
   */
  async undo(token: string, clientAddress: string): Promise<UndoResult> {
    await this.throttle(clientAddress);
    const key = linkKey(token);
    if (key === undefined) throw badRequest(BAD_UNDO_LINK);
    const now = this.d.clock.now();
    const done = await this.d.store.transaction(async (repos) => {
      const link = await repos.emailTokens.consume(key, 'undo_passkey', now, { sameEmail: false });
      if (!link?.subject) return undefined;
      const since = await firstAddedAt(repos, link.userId, link.subject);
      const passkeysRemoved = since === undefined ? [] : await repos.passkeys.deleteCreatedSince(link.userId, since);
      const grantsRevoked = since === undefined ? [] : await this.d.grants.revokeCreatedSince(repos, link.userId, since, now, clientAddress);
      await repos.sessions.deleteForUser(link.userId);
      const removed = passkeysRemoved.includes(link.subject);
      const detail = { device_id: link.subject, removed, passkeys_removed: passkeysRemoved, grants_revoked: grantsRevoked.map((g) => g.id) };
      await repos.activity.add({ userId: link.userId, agentId: null, site: null, action: 'passkey.undone', detail, ip: clientAddress, createdAt: now });
      return { userId: link.userId, deviceId: link.subject, removed, passkeysRemoved, grantsRevoked: grantsRevoked.length };
    });
    if (!done) throw badRequest(BAD_UNDO_LINK);
    await this.d.notices.security(done.userId, 'Passkey removed by the undo link', undoneNotice(done.passkeysRemoved.length, done.grantsRevoked));
    return { undone: true, device_id: done.deviceId, removed: done.removed, passkeys_removed: done.passkeysRemoved, grants_revoked: done.grantsRevoked, sessions_ended: true };
  }

  private throttle(clientAddress: string): Promise<void> {
    return this.d.limiter.check(LINK_ATTEMPTS.keyFor(clientAddress), LINK_ATTEMPTS.perAddress, LINK_ATTEMPTS.windowSec);
  }
}

/** What POST /api/passkeys/undo answers. */
export interface UndoResult {
  undone: true;
  /** The first passkey, which the link names. */
  device_id: string;
  /** Whether that passkey was still there to remove. */
  removed: boolean;
  /** Every passkey removed: the first and all enrolled after it. */
  passkeys_removed: string[];
  /** How many grants approved since the first passkey were revoked. */
  grants_revoked: number;
  sessions_ended: true;
}

/**
 * When the first passkey was enrolled: its own record, or, when it has been removed since (say by
 * whoever enrolled a second one, to dodge the undo), the notice's activity record written at once.
 */
async function firstAddedAt(repos: Repos, userId: string, deviceId: string): Promise<number | undefined> {
  const passkey = (await repos.passkeys.listForUser(userId)).find((p) => p.id === deviceId);
  if (passkey) return passkey.createdAt;
  const notices = await repos.activity.list(userId, { before: 0, limit: 20, action: 'passkey.first_added' });
  return notices.find((n) => n.detail.device_id === deviceId)?.createdAt;
}

function undoneNotice(passkeys: number, grants: number): string {
  const removed = passkeys === 0
    ? 'The undo link we mailed you was used (the passkey had already been removed)'
    : `The undo link we mailed you was used: ${passkeys === 1 ? 'the passkey added to your account was' : `the passkey added to your account and the ${passkeys - 1} added after it were`} removed`;
  const revoked = grants === 0 ? '' : `, the ${grants === 1 ? 'access approved' : `${grants} accesses approved`} with ${passkeys === 1 ? 'it' : 'them'} ${grants === 1 ? 'was' : 'were'} revoked`;
  return `${removed}${revoked}, and every session was signed out. Sign in, change your password, and add your own passkey.`;
}
