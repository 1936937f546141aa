import type { OutboxEnd, OutboxMessage, PushDeviceRecord, Store } from '../store/ports/index.ts';
import type { Clock } from '../clock.ts';
import { BACKCHANNEL_CHANNEL } from '../domain/oidc/logout.ts';
import type { BackchannelLogout, BackchannelTransport } from './backchannel.ts';
import type { PushOptions, PushPayload, PushTransport, SendResult, WebPushTarget } from './push-port.ts';
import type { KeyEncryption } from '../crypto/key-encryption.ts';
import { MAIL_CHANNEL, openMail } from '../domain/mail/mailer.ts';
import type { MailTransport } from './mail.ts';
import { dampMs } from './damping.ts';
import { SMS_CHANNEL, openSms } from '../domain/sms/sms-queue.ts';
import type { SmsResult, SmsSender } from './sms-port.ts';

/** The transports that are configured; null (or absent): that channel cannot send (its messages fail, logged). */
export interface Transports {
  webpush: PushTransport<WebPushTarget> | null;
  fcm: PushTransport<{ token: string }> | null;
  /** Back-channel logout to relying parties: messages tied to a client's address, not to a device. */
  backchannel?: BackchannelTransport | null;
  /**
   * Mail over SMTP (SMTP_URL). Null or absent: development mode, each mail is written to the log
   * (recipient, subject and text, links included) and counts as sent.
   */
  email?: MailTransport | null;
  /** Opens mail and SMS sealed under KEY_ENCRYPTION_KEY (domain/mail/mailer.ts, domain/sms/sms-queue.ts). */
  mailKeys?: KeyEncryption | null;
  /**
   * Text messages through SMS_PROVIDER. Null or absent: development mode, each SMS (number and text,
   * its one-time code included) is written to the log and counts as sent; it stays in the outbox.
   */
  sms?: SmsSender | null;
}

export interface WorkerLog {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
}

/**
 * Sends in flight on one node at most. Each send runs on its own: a slot frees when its send ends
 * and is filled by the next claim, so a hung endpoint (the guard gives up after 5 s) holds one slot,
 * never a batch. A message is claimed only when a slot is free, so a claim only has to outlast one
 * send (the transport's own timeout).
 */
export const SEND_SLOTS = 64;
/**
 * Messages of one owner under claims at once, across nodes (the claim counts every node's live
 * claims): an owner whose devices never answer holds at most this many slots; the others stay free.
 */
export const OWNER_SLOTS = 8;
/** Attempts before a message is given up (about 43 minutes of backoff in all, unless Retry-After says longer). */
export const MAX_ATTEMPTS = 10;
const BACKOFF_BASE_MS = 5_000;
const BACKOFF_MAX_MS = 30 * 60_000;

/** Exponential backoff with ±20 % jitter, so many failed messages do not come back in one burst. */
export function backoffMs(attempts: number, random: () => number = Math.random): number {
  const plain = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, attempts - 1));
  return Math.round(plain * (0.8 + 0.4 * random()));
}

const URGENT = new Set(['approval', 'dismiss', 'takeover', 'test']);

/**
 * How long a push service may hold the message for an offline device, and how urgent it is. An
 * approval and a note are worth holding until their own end (a note's hour), no longer.
 */
function pushOptions(m: Pick<OutboxMessage, 'kind' | 'topic' | 'expiresAt'>, now: number): PushOptions {
  const ttlSec = (m.kind === 'approval' || m.kind === 'note') && m.expiresAt !== null
    ? Math.max(1, Math.ceil((m.expiresAt - now) / 1000))
    : m.kind === 'dismiss' ? 3600 : m.kind === 'test' ? 300 : 86_400;
  const options: PushOptions = { ttlSec, urgency: URGENT.has(m.kind) ? 'high' : 'normal' };
  if (m.topic !== null) options.topic = m.topic;
  return options;
}

/**
 * A passing failure: due again after the backoff (or the longer wait the receiver asked for), or
 * given up when out of attempts or when the next try would come after the message's expiry.
 */
function retryOrGiveUp(m: Pick<OutboxMessage, 'attempts' | 'expiresAt'>, result: { detail: string; retryAfterMs?: number }, at: number): OutboxEnd {
  const retryAt = at + Math.max(backoffMs(m.attempts), result.retryAfterMs ?? 0);
  if (m.attempts >= MAX_ATTEMPTS || (m.expiresAt !== null && retryAt >= m.expiresAt)) {
    return { failedAt: at, error: `gave up after ${m.attempts} attempts: ${result.detail}` };
  }
  return { retryAt, error: result.detail };
}

/** The stored payload (domain/oidc/logout.ts), read back defensively: it crossed the database. */
function backchannelLogoutOf(p: Record<string, unknown>): BackchannelLogout | null {
  const { uri, client_id: clientId, sub, sid } = p;
  if (typeof uri !== 'string' || typeof clientId !== 'string' || typeof sub !== 'string' || typeof sid !== 'string') return null;
  return { uri, clientId, sub, sid };
}

/**
 * Sends the outbox: every node runs one, each claims due messages in the shared store (one claim
 * per message across nodes), sends them through the device's transport (or, for
 * `backchannel`, to the relying party's logout address), and ends each message as
 * sent, failed for good, or due again after a backoff. A node that dies mid-send leaves a claim that
 * runs out (claimMs); another node then sends the message (at least once, never lost).
 */
export class OutboxWorker {
  private timer: ReturnType<typeof setInterval> | undefined;
  private draining: Promise<number> | null = null;
  /** Sends in flight on this node (at most SEND_SLOTS), each ending on its own. */
  private readonly sending = new Set<Promise<void>>();
  /** Set by a wake: look for due messages again; `wakeUp` ends the pump's wait for a free slot. */
  private again = false;
  private wakeUp: (() => void) | null = null;
  private stopped = false;
  private log: WorkerLog = { info() {}, warn() {} };

  /**
   * `claimMs`: how long a claim lasts (OUTBOX_CLAIM_SECONDS), far beyond one send (5 s web push, 10 s
   * FCM), so that only a node that died loses one.
   */
  /** `onFailed`: a message given up for good (the metrics count them by channel). */
  constructor(private readonly deps: { store: Store; clock: Clock; transports: Transports; holder: string; pollMs: number; claimMs: number; onFailed?: (channel: string) => void }) {}

  /** Ends this node's claim on `m`. */
  private async finish(m: OutboxMessage, e: OutboxEnd): Promise<void> {
    const { store, holder, onFailed } = this.deps;
    if ((await store.outbox.finish(m.id, holder, e)) && 'failedAt' in e) onFailed?.(m.channel);
  }

  /** The HTTP server's logger exists only after the services; it is attached once built. */
  attachLog(log: WorkerLog): void {
    this.log = log;
    if (!this.deps.transports.email) log.warn({}, 'mail: SMTP_URL is not set: mail (verification and undo links) is written to this log instead of sent (development only)');
    if (!this.deps.transports.sms) log.warn({}, 'sms: SMS_PROVIDER is not set: text messages (phone and recovery codes) are written to this log instead of sent (development only)');
  }

  start(): void {
    this.timer = setInterval(() => this.wake(), this.deps.pollMs);
    this.timer.unref();
  }

  /** Waits for sends in flight; nothing is claimed after this. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.wakeUp?.();
    await this.draining?.catch(() => 0);
    await Promise.allSettled([...this.sending]);
  }

  /** Sends what is due now, in the background; a wake during a drain makes it look again at once. */
  wake(): void {
    if (this.stopped) return;
    if (this.draining) {
      this.again = true;
      this.wakeUp?.();
      return;
    }
    void this.drain().catch((err: unknown) => this.log.warn({ err }, 'outbox: delivery round failed; the next poll tries again'));
  }

  /**
   * Sends every message due now (and those that fall due or are queued meanwhile) and waits for
   * the sends; answers how many were claimed. Claims as many as there are free slots (the store
   * picks them fairly between owners, OWNER_SLOTS at most per owner), starts each send, and claims
   * again whenever a send ends or a wake comes.
   */
  drain(): Promise<number> {
    this.draining ??= this.pump().finally(() => {
      this.draining = null;
    });
    return this.draining;
  }

  private async pump(): Promise<number> {
    const { store, holder, clock, claimMs } = this.deps;
    let handled = 0;
    for (;;) {
      this.again = false;
      const free = SEND_SLOTS - this.sending.size;
      if (free > 0 && !this.stopped) {
        const claimed = await store.outbox.claimDue(holder, clock.now(), claimMs, free, { perOwner: OWNER_SLOTS });
        for (const m of claimed) this.launch(m);
        handled += claimed.length;
      }
      if (this.again && !this.stopped) continue; // a wake came during the claim
      if (this.sending.size === 0) return handled;
      const woken = new Promise<void>((resolve) => {
        this.wakeUp = resolve;
      });
      await Promise.race([...this.sending, woken]);
      this.wakeUp = null;
    }
  }

  /** One send in a slot of its own; it frees the slot when it ends, whatever the outcome. */
  private launch(m: OutboxMessage): void {
    const sending: Promise<void> = this.send(m)
      .catch((err: unknown) => this.log.warn({ err, outboxId: m.id }, 'outbox: send failed; the claim runs out and the message is tried again'))
      .finally(() => this.sending.delete(sending));
    this.sending.add(sending);
  }

  /** POST /api/push/test: a `test` push to each of the owner's devices, sent now (not queued). */
  async sendTest(userId: string, payload: PushPayload): Promise<{ sent: number; failed: number; devices: { id: string; outcome: SendResult['outcome']; detail?: string }[] }> {
    const devices = await this.deps.store.pushDevices.listForUser(userId);
    const results = await Promise.all(devices.map(async (d) => ({ id: d.id, result: await this.deliver(d, payload, pushOptions({ kind: 'test', topic: null, expiresAt: null }, this.deps.clock.now())) })));
    const devicesOut = results.map(({ id, result }) => ({ id, outcome: result.outcome, ...('detail' in result ? { detail: result.detail } : {}) }));
    const sent = results.filter((r) => r.result.outcome === 'sent').length;
    return { sent, failed: results.length - sent, devices: devicesOut };
  }

  private send(m: OutboxMessage): Promise<void> {
    if (m.channel === BACKCHANNEL_CHANNEL) return this.sendBackchannel(m);
    if (m.channel === MAIL_CHANNEL) return this.sendMail(m);
    if (m.channel === SMS_CHANNEL) return this.sendSms(m);
    return this.sendPush(m);
  }

  /**
   * One try of a mail (decisions §25): sent, refused for good by the SMTP server (failed), or due
   * again after the backoff until its expiry (a link's 24 hours). The text is never logged: it may
   * hold a secret link. Without an SMTP transport (development) the whole mail goes to the log.
   */
  private async sendMail(m: OutboxMessage): Promise<void> {
    const { clock, transports } = this.deps;
    const end = (e: OutboxEnd) => this.finish(m, e);
    const mail = openMail(m.payload, transports.mailKeys ?? null);
    if ('error' in mail) {
      this.log.warn({ outboxId: m.id, kind: m.kind, detail: mail.error }, 'outbox: mail cannot be read; not sent');
      return end({ failedAt: clock.now(), error: mail.error });
    }
    if (m.expiresAt !== null && clock.now() >= m.expiresAt) return end({ failedAt: clock.now(), error: 'expired before it could be delivered' });
    if (!transports.email) {
      this.log.warn({ outboxId: m.id, kind: m.kind, to: mail.to, subject: mail.subject, text: mail.text }, 'mail not sent (SMTP_URL is not set; development only): here it is');
      return end({ sentAt: clock.now() });
    }
    let result: SendResult;
    try {
      result = await transports.email.send(mail);
    } catch (err) {
      result = { outcome: 'retry', detail: err instanceof Error ? err.message : 'mail transport error' };
    }
    const at = clock.now();
    const next: OutboxEnd = result.outcome === 'sent' ? { sentAt: at }
      : result.outcome === 'retry' ? retryOrGiveUp(m, result, at)
      : { failedAt: at, error: result.detail };
    const details = { outboxId: m.id, kind: m.kind, attempts: m.attempts, ...('detail' in result ? { detail: result.detail } : {}) };
    if ('sentAt' in next) this.log.info(details, 'outbox: mail sent');
    else this.log.warn(details, 'failedAt' in next ? 'outbox: mail refused; not retried' : 'outbox: mail not sent; will retry');
    return end(next);
  }

  /**
   * One try of an SMS (decisions §14), as a mail: sent, refused for good by the provider (failed),
   * or due again after the backoff (or the provider's Retry-After) until the code expires. The text
   * holds a one-time code and is never logged, except without a provider (development), where the
   * log is the only way to read it, as for mail without SMTP.
   */
  private async sendSms(m: OutboxMessage): Promise<void> {
    const { clock, transports } = this.deps;
    const end = (e: OutboxEnd) => this.finish(m, e);
    const sms = openSms(m.payload, transports.mailKeys ?? null);
    if ('error' in sms) {
      this.log.warn({ outboxId: m.id, kind: m.kind, detail: sms.error }, 'outbox: SMS cannot be read; not sent');
      return end({ failedAt: clock.now(), error: sms.error });
    }
    if (m.expiresAt !== null && clock.now() >= m.expiresAt) return end({ failedAt: clock.now(), error: 'expired before it could be delivered' });
    if (!transports.sms) {
      this.log.warn({ outboxId: m.id, kind: m.kind, to: sms.to, text: sms.text }, 'SMS not sent (SMS_PROVIDER is not set; development only): here it is');
      return end({ sentAt: clock.now() });
    }
    let result: SmsResult;
    try {
      result = await transports.sms.send(sms);
    } catch (err) {
      result = { outcome: 'retry', detail: err instanceof Error ? err.message : 'SMS transport error' };
    }
    const at = clock.now();
    const next: OutboxEnd = result.outcome === 'sent' ? { sentAt: at }
      : result.outcome === 'retry' ? retryOrGiveUp(m, result, at)
      : { failedAt: at, error: result.detail };
    const details = { outboxId: m.id, kind: m.kind, attempts: m.attempts, ...('detail' in result ? { detail: result.detail } : {}) };
    if ('sentAt' in next) this.log.info(details, 'outbox: SMS sent');
    else this.log.warn(details, 'failedAt' in next ? 'outbox: SMS refused; not retried' : 'outbox: SMS not sent; will retry');
    return end(next);
  }

  private async sendPush(m: OutboxMessage): Promise<void> {
    const { store, clock } = this.deps;
    const now = clock.now();
    const device = m.deviceId ? await store.pushDevices.byId(m.deviceId) : undefined;
    const end = (e: OutboxEnd) => this.finish(m, e);
    if (!device || device.kind !== m.channel) return end({ failedAt: now, error: 'device removed' });
    if (m.expiresAt !== null && now >= m.expiresAt) return end({ failedAt: now, error: 'expired before it could be delivered' });
    if (device.dampedUntil !== null && device.dampedUntil > now) {
      // Damped since this message was queued: it waits with the others, unless it ends first.
      const error = `device damped after ${device.failures} failed sends in a row`;
      return end(m.expiresAt !== null && device.dampedUntil >= m.expiresAt ? { failedAt: now, error: `${error}; expired before it could be delivered` } : { retryAt: device.dampedUntil, error });
    }
    const result = await this.deliver(device, m.payload as unknown as PushPayload, pushOptions(m, now));
    const at = clock.now();
    if (result.outcome === 'retry') {
      const dampedUntil = await this.countFailure(device, at);
      // The message waits at least as long as its device (the deferral skipped it: it was claimed).
      if (dampedUntil !== null) result.retryAfterMs = Math.max(result.retryAfterMs ?? 0, dampedUntil - at);
    }
    switch (result.outcome) {
      case 'sent':
        return end({ sentAt: at });
      case 'gone':
        return end({ failedAt: at, error: `device gone: ${result.detail}` });
      case 'failed':
        this.log.warn({ outboxId: m.id, device: device.id, channel: m.channel, detail: result.detail }, 'outbox: push refused; not retried');
        return end({ failedAt: at, error: result.detail });
      case 'retry': {
        const next = retryOrGiveUp(m, result, at);
        if ('failedAt' in next) this.log.warn({ outboxId: m.id, device: device.id, attempts: m.attempts, detail: result.detail }, 'outbox: push given up');
        return end(next);
      }
    }
  }

  /**
   * A failed send to `device` (timeout, network, 5xx, 429): one more in a row, and past the threshold
   * the device is damped (delivery/damping.ts) and its waiting messages deferred to the end of it.
   * Answers the end of the damping, or null.
   */
  private async countFailure(device: PushDeviceRecord, at: number): Promise<number | null> {
    const { store } = this.deps;
    const failures = await store.pushDevices.recordFailure(device.id);
    const wait = failures === undefined ? 0 : dampMs(failures);
    if (wait === 0) return null;
    const until = at + wait;
    await store.pushDevices.damp(device.id, until);
    const deferred = await store.outbox.deferForDevice(device.userId, device.id, until);
    this.log.warn({ device: device.id, kind: device.kind, failures, dampedForMs: wait, deferred }, 'push device damped: its sends keep failing');
    return until;
  }

  /**
   * One try of a back-channel logout (decisions §18): sent, refused by the relying party or the
   * outbound guard (failed, not retried), or due again after the backoff until the message's 15
   * minutes run out. Each try is counted (attempts) and its result kept (last_error, sent_at,
   * failed_at) and logged.
   */
  private async sendBackchannel(m: OutboxMessage): Promise<void> {
    const { clock, transports } = this.deps;
    const end = (e: OutboxEnd) => this.finish(m, e);
    const logout = backchannelLogoutOf(m.payload);
    if (logout === null) return end({ failedAt: clock.now(), error: 'malformed back-channel logout message' });
    if (m.expiresAt !== null && clock.now() >= m.expiresAt) return end({ failedAt: clock.now(), error: 'expired before it could be delivered' });
    let result: SendResult;
    try {
      result = transports.backchannel ? await transports.backchannel.send(logout) : { outcome: 'failed', detail: 'back-channel logout is not set up on this service' };
    } catch (err) {
      result = { outcome: 'retry', detail: err instanceof Error ? err.message : 'transport error' };
    }
    const at = clock.now();
    const next: OutboxEnd = result.outcome === 'sent' ? { sentAt: at }
      : result.outcome === 'retry' ? retryOrGiveUp(m, result, at)
      : { failedAt: at, error: result.detail };
    const details = { outboxId: m.id, clientId: logout.clientId, attempts: m.attempts, ...('detail' in result ? { detail: result.detail } : {}) };
    if ('sentAt' in next) this.log.info(details, 'outbox: back-channel logout delivered');
    else this.log.warn(details, 'failedAt' in next ? 'outbox: back-channel logout failed; not retried' : 'outbox: back-channel logout not delivered; will retry');
    return end(next);
  }

  /**
   * One push to one device. A device its push service calls gone is removed with its queued
   * messages (decisions §13: 404 and 410 remove the device). A transport that throws is a passing
   * failure, never a crash of the worker.
   */
  private async deliver(device: PushDeviceRecord, payload: PushPayload, options: PushOptions): Promise<SendResult> {
    const { store, clock, transports } = this.deps;
    let result: SendResult;
    try {
      if (device.kind === 'webpush') {
        result = transports.webpush && device.p256dh && device.auth
          ? await transports.webpush.send({ endpoint: device.address, p256dh: device.p256dh, auth: device.auth }, payload, options)
          : { outcome: 'failed', detail: 'web push is not set up on this service' };
      } else {
        result = transports.fcm
          ? await transports.fcm.send({ token: device.address }, payload, options)
          : { outcome: 'failed', detail: 'Android push (FCM) is not configured on this service: set FCM_PROJECT_ID and FCM_SERVICE_ACCOUNT_FILE' };
      }
    } catch (err) {
      result = { outcome: 'retry', detail: err instanceof Error ? err.message : 'transport error' };
    }
    if (result.outcome === 'sent') await store.pushDevices.touch(device.id, clock.now());
    if (result.outcome === 'gone') {
      await store.pushDevices.deleteById(device.id);
      // Its queued messages, this one included, are given up here: each is counted as a failure.
      const givenUp = await store.outbox.cancelForDevice(device.id, clock.now(), 'device gone');
      for (let i = 0; i < givenUp; i++) this.deps.onFailed?.(device.kind);
      this.log.info({ device: device.id, kind: device.kind, detail: result.detail }, 'push device removed: its push service says it is gone');
    }
    return result;
  }
}
