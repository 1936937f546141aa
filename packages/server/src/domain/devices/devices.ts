import type { OutboundPolicy } from '../../outbound/types.ts';
import { outboundUrlProblem } from '../../outbound/url-policy.ts';
import type { PushHostPolicy } from '../../outbound/push-hosts.ts';
import type { PushDeviceKind, PushDeviceRecord, Store } from '../../store/ports/index.ts';
import type { Clock } from '../../clock.ts';
import { badRequest, conflict, notFound } from '../errors.ts';
import { looksLikeId, newId } from '../ids.ts';
import { type ManagingSession, type Passkeys, deviceName } from '../passkeys/passkeys.ts';
import type { RateLimiter } from '../rate-limit.ts';

export interface DeviceView {
  id: string;
  kind: 'passkey' | PushDeviceKind;
  name: string;
  createdAt: number;
  lastUsedAt: number | null;
  /**
   * A notifying device whose push service kept failing is not tried until this time (delivery/damping.ts);
   * null when it is tried as usual (always null for a passkey).
   */
  pausedUntil: number | null;
}

export interface WebPushSubscription {
  endpoint: string;
  keys: { p256dh: string; auth: string };
  name?: string;
}

/** Notifying devices per owner: far more than anyone carries, few enough to fan out at once. */
export const MAX_PUSH_DEVICES = 50;
/** Registrations per owner per hour (a browser re-subscribes now and then; a loop should not churn). */
export const REGISTRATIONS_PER_HOUR = 60;
const FCM_TOKEN = /^[A-Za-z0-9_:.-]{20,4096}$/;
const B64URL = /^[A-Za-z0-9_-]+={0,2}$/;

const decoded = (value: string): Buffer | null => (B64URL.test(value) ? Buffer.from(value.replace(/=+$/, ''), 'base64url') : null);

/** The subscription's keys as RFC 8291 needs them: a P-256 point (65 octets, 0x04 first) and a 16-octet secret. */
function checkKeys(keys: WebPushSubscription['keys']): void {
  const p256dh = decoded(keys.p256dh);
  if (!p256dh || p256dh.length !== 65 || p256dh[0] !== 4) throw badRequest('keys.p256dh must be base64url of an uncompressed P-256 public key (65 bytes), as PushSubscription.toJSON() gives it');
  const auth = decoded(keys.auth);
  if (!auth || auth.length !== 16) throw badRequest('keys.auth must be base64url of the 16-byte auth secret, as PushSubscription.toJSON() gives it');
}

/**
 * The owner's devices (decisions §13): passkeys approve, web-push subscriptions and Android FCM
 * registrations notify. One list, one removal, whatever the kind.
 */
export class Devices {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly limiter: RateLimiter,
    private readonly passkeys: Passkeys,
    private readonly outbound: OutboundPolicy,
    private readonly fcmConfigured: boolean,
    private readonly pushHosts: PushHostPolicy,
  ) {}

  async list(userId: string): Promise<DeviceView[]> {
    const [keys, push] = await Promise.all([this.passkeys.devices(userId), this.store.pushDevices.listForUser(userId)]);
    const now = this.clock.now();
    const views: DeviceView[] = [
      ...keys.map((k) => ({ id: k.id, kind: 'passkey' as const, name: k.name, createdAt: k.createdAt, lastUsedAt: k.lastUsedAt, pausedUntil: null })),
      ...push.map((d) => ({ id: d.id, kind: d.kind, name: d.name, createdAt: d.createdAt, lastUsedAt: d.lastUsedAt, pausedUntil: d.dampedUntil !== null && d.dampedUntil > now ? d.dampedUntil : null })),
    ];
    // A stable sort: at the same time, passkeys before notifying devices.
    return views.sort((a, b) => a.createdAt - b.createdAt);
  }

  /** A notifying device goes with any session; a passkey by the passkey rule (passkey-policy.ts). */
  async remove(session: ManagingSession, deviceId: string): Promise<void> {
    if (!looksLikeId('dev', deviceId)) throw notFound('device not found');
    if (await this.store.pushDevices.delete(session.user.id, deviceId)) {
      await this.store.outbox.cancelForDevice(deviceId, this.clock.now(), 'device removed by its owner');
      return;
    }
    await this.passkeys.removeDevice(session, deviceId);
  }

  /** POST /api/push: the browser's subscription, upserted by endpoint. */
  async registerWebPush(userId: string, sub: WebPushSubscription, userAgent: string | undefined): Promise<PushDeviceRecord> {
    const problem = outboundUrlProblem(sub.endpoint, this.outbound, 'the push endpoint') ?? this.pushHosts.problem(sub.endpoint);
    if (problem) throw badRequest(problem);
    checkKeys(sub.keys);
    return this.register(userId, { kind: 'webpush', address: sub.endpoint, p256dh: sub.keys.p256dh, auth: sub.keys.auth, name: sub.name?.trim() || `${deviceName(userAgent)} notifications` });
  }

  /** POST /api/fcm: the Android app's registration token. */
  async registerFcm(userId: string, token: string, name: string | undefined): Promise<PushDeviceRecord> {
    if (!this.fcmConfigured) throw conflict('Android push is not configured on this service (the operator sets FCM_PROJECT_ID and FCM_SERVICE_ACCOUNT_FILE); use notifications in the browser meanwhile');
    if (!FCM_TOKEN.test(token)) throw badRequest('token must be the FCM registration token the app got from Firebase (20 to 4096 characters of A-Z, a-z, 0-9, _ : . -)');
    return this.register(userId, { kind: 'fcm', address: token, p256dh: null, auth: null, name: name?.trim() || 'Android app' });
  }

  /** POST /api/push/unsub: one subscription, or every web-push subscription of the owner. */
  async unsubscribe(userId: string, endpoint: string | null): Promise<number> {
    const removed = await this.store.pushDevices.deleteWebPush(userId, endpoint);
    for (const d of removed) await this.store.outbox.cancelForDevice(d.id, this.clock.now(), 'unsubscribed');
    return removed.length;
  }

  private async register(userId: string, d: Pick<PushDeviceRecord, 'kind' | 'address' | 'p256dh' | 'auth' | 'name'>): Promise<PushDeviceRecord> {
    await this.limiter.check(`push-register:${userId}`, REGISTRATIONS_PER_HOUR, 3600);
    const existing = await this.store.pushDevices.listForUser(userId);
    const same = existing.some((e) => e.kind === d.kind && e.address === d.address);
    if (!same && existing.length >= MAX_PUSH_DEVICES) throw conflict(`you have ${MAX_PUSH_DEVICES} notifying devices, the most an account may have: remove one you no longer use (GET /api/devices)`);
    return this.store.pushDevices.upsert({ ...d, id: newId('dev'), userId, name: d.name.slice(0, 100), createdAt: this.clock.now(), lastUsedAt: null });
  }
}
