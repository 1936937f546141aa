import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../src/app.ts';
import { parseConfig } from '../src/config/config.ts';
import { FixedClock } from '../src/clock.ts';
import { purgeExpired } from '../src/domain/housekeeping.ts';
import { expectStatus, json, signUp, testApp, type TestApp } from './helpers/app.ts';
import { createAgent } from './helpers/agents.ts';
import { accessRequest, approve, ownerWithPasskey, respond } from './helpers/approvals.ts';
import { verifyEmail } from './helpers/email-links.ts';
import { startPushService, type PushServiceStandIn, type SubscriptionJson } from './helpers/stand-ins/push-service.ts';
import { startFcmStandIn, type FcmStandIn } from './helpers/stand-ins/fcm.ts';

// The whole delivery path in-process (app.inject), against a push service and an FCM stand-in that
// decrypt and check what they receive. The outbox worker runs as in production; `drain()` waits for
// it deterministically.

type Payload = Record<string, unknown>;
type Auth = { auth: Record<string, string> };

async function subscribe(t: TestApp, owner: Auth, sub: SubscriptionJson, name?: string): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: '/api/push', headers: owner.auth, payload: { ...sub, expirationTime: null, ...(name ? { name } : {}) } });
  expectStatus(res, 200);
  return json<{ device_id: string }>(res).device_id;
}

const drain = (t: TestApp) => t.services.outbox.drain();

function deliveryPath(backend: 'sqlite' | 'postgres'): void {
  /** mandate_outbox_delivery_failures_total{channel="webpush"} as the metrics endpoint would show it. */
  const givenUpCount = async (t: TestApp): Promise<number> => {
    const { body } = await t.services.metrics.scrape();
    const m = /^mandate_outbox_delivery_failures_total\{channel="webpush"\} (\d+)$/m.exec(body);
    return m ? Number(m[1]) : 0;
  };

  describe(`push delivery (${backend})`, () => {
    let t: TestApp;
    let push: PushServiceStandIn;
    before(async () => {
      push = await startPushService();
      t = await testApp({ backend, env: { OUTBOUND_ALLOW_LOOPBACK: 'true', OUTBOX_POLL_MS: '600000' } });
      push.expectVapidKey(t.services.vapidPublicKey);
    });
    after(async () => {
      await t.close();
      await push.close();
    });

    it('an access request reaches every device, encrypted and VAPID-signed; an answer dismisses it on all', async () => {
      const owner = await ownerWithPasskey(t);
      const phone = push.newSubscription('phone');
      const laptop = push.newSubscription('laptop');
      await subscribe(t, owner, phone, 'Phone');
      await subscribe(t, owner, laptop);
      const agent = await createAgent(t, owner, 'Shopper');
      await verifyEmail(t, owner);
      await drain(t);
      const txn = await accessRequest(t, agent, { site: 'shop.example', scopes: ['orders:read'], user_info: ['user:email'] });
      await drain(t);
      for (const sub of [phone, laptop]) {
        const approvals = push.received(sub).filter((p) => (p as Payload)['type'] === 'approval') as Payload[];
        assert.equal(approvals.length, 1);
        const p = approvals[0]!;
        assert.deepEqual(Object.keys(p).sort(), ['body', 'expires_at', 'id', 'kind', 'title', 'txn_id', 'type', 'url']);
        assert.equal(p['txn_id'], txn);
        assert.equal(p['kind'], 'access');
        assert.equal(p['title'], 'Shopper asks for access to shop.example');
        assert.equal(p['body'], 'Wants: orders:read · and your email');
        assert.equal(p['url'], `/app#requests/${txn}`);
        assert.equal(p['expires_at'], new Date(t.clock.now() + 300_000).toISOString());
        assert.match(String(p['id']), /^n_/);
      }
      const delivery = push.all().find((d) => d.endpoint === phone.endpoint && (d.payload as Payload)['type'] === 'approval');
      assert.equal(delivery?.urgency, 'high');
      assert.equal(delivery?.topic, txn, 'a later dismiss replaces an undelivered approval at the push service');
      assert.ok(delivery!.ttl > 0 && delivery!.ttl <= 300);
      assert.deepEqual(push.rejections, []);

      expectStatus(await approve(t, owner, txn), 200);
      await drain(t);
      for (const sub of [phone, laptop]) {
        const dismiss = push.received(sub).filter((p) => (p as Payload)['type'] === 'dismiss') as Payload[];
        assert.deepEqual(dismiss.map((d) => d['txn_id']), [txn], 'one dismiss per device, at once');
      }
      // Nothing more is due: the dismissal scheduled for the expiry was the one brought forward.
      t.clock.advance(301_000);
      await drain(t);
      assert.equal(push.received(phone).filter((p) => (p as Payload)['type'] === 'dismiss').length, 1);
      const devices = json<{ kind: string; last_used_at: string | null }[]>(await t.app.inject({ url: '/api/devices', headers: owner.auth }));
      assert.deepEqual(devices.map((d) => d.kind), ['passkey', 'webpush', 'webpush']);
      assert.ok(devices.slice(1).every((d) => d.last_used_at !== null), 'a delivered push marks the device used');
    });

    it('a request nobody answers is dismissed on every device when it expires', async () => {
      const owner = await ownerWithPasskey(t);
      const sub = push.newSubscription();
      await subscribe(t, owner, sub);
      const agent = await createAgent(t, owner, 'Idle');
      const txn = await accessRequest(t, agent);
      await drain(t);
      assert.ok(push.received(sub).some((p) => (p as Payload)['type'] === 'approval' && (p as Payload)['txn_id'] === txn));
      t.clock.advance(299_000);
      await drain(t);
      assert.equal(push.received(sub).filter((p) => (p as Payload)['type'] === 'dismiss').length, 0, 'not before the expiry');
      t.clock.advance(1_000);
      await drain(t);
      const dismiss = push.received(sub).filter((p) => (p as Payload)['type'] === 'dismiss') as Payload[];
      assert.deepEqual(dismiss.map((d) => d['txn_id']), [txn]);
    });

    it('a denial dismisses; a step-up and a note are pushed with what they say', async () => {
      const owner = await ownerWithPasskey(t);
      const sub = push.newSubscription();
      await subscribe(t, owner, sub);
      const agent = await createAgent(t, owner, 'Payer');
      const txn = await accessRequest(t, agent);
      expectStatus(await respond(t, owner, txn, { approve: false }), 200);
      await drain(t);
      assert.ok(push.received(sub).some((p) => (p as Payload)['type'] === 'dismiss' && (p as Payload)['txn_id'] === txn));
      const note = await t.app.inject({ method: 'POST', url: '/api/v1/agent-notify', payload: { agent_id: agent.id, agent_jwt: await agent.jwt(), text: 'Paid the invoice.', title: 'Done' } });
      expectStatus(note, 200);
      await drain(t);
      const last = push.received(sub).at(-1) as Payload;
      assert.deepEqual({ type: last['type'], title: last['title'], body: last['body'], url: last['url'] }, { type: 'note', title: 'Payer: Done', body: 'Paid the invoice.', url: '/app#notifications' });
    });

    it('retries a failing push service with backoff, and removes a device that is gone', async () => {
      const owner = await ownerWithPasskey(t);
      const flaky = push.newSubscription();
      const gone = push.newSubscription();
      await subscribe(t, owner, flaky);
      const goneId = await subscribe(t, owner, gone);
      const agent = await createAgent(t, owner, 'Retry');
      await drain(t);
      push.behave(flaky, { status: 503 });
      push.behave(gone, { status: 410 });
      const failuresBefore = await givenUpCount(t);
      const txn = await accessRequest(t, agent);
      await drain(t);
      const approvals = (await t.services.store.outbox.list({ topic: txn, kind: 'approval' })).filter((m) => m.failedAt !== null);
      assert.deepEqual(approvals.map((m) => m.deviceId), [goneId], 'the approval to the gone device is given up; the 503 one waits for its retry');
      // Every message queued for the gone device is given up with it, and each is counted.
      const givenUp = (await t.services.store.outbox.list({ userId: owner.user.id })).filter((m) => m.deviceId === goneId && m.failedAt !== null);
      assert.ok(givenUp.length >= 1);
      assert.equal(await givenUpCount(t) - failuresBefore, givenUp.length, 'mandate_outbox_delivery_failures_total counts them');
      assert.equal(push.received(flaky).filter((p) => (p as Payload)['txn_id'] === txn).length, 0);
      const [queued] = (await t.services.store.outbox.list({ topic: txn, kind: 'approval' })).filter((m) => m.deviceId !== goneId);
      assert.equal(queued?.attempts, 1);
      assert.equal(queued?.sentAt, null);
      assert.ok(queued!.nextAttemptAt > t.clock.now(), 'due again later');
      assert.ok(queued!.nextAttemptAt - t.clock.now() >= 4_000, `backoff ${queued!.nextAttemptAt - t.clock.now()} ms`);
      const devices = json<{ id: string }[]>(await t.app.inject({ url: '/api/devices', headers: owner.auth }));
      assert.ok(!devices.some((d) => d.id === goneId), 'the 410 device is removed');

      push.behave(flaky, undefined);
      t.clock.set(queued!.nextAttemptAt);
      await drain(t);
      assert.equal(push.received(flaky).filter((p) => (p as Payload)['txn_id'] === txn).length, 1, 'delivered at the retry');
      const [sent] = (await t.services.store.outbox.list({ topic: txn, kind: 'approval' })).filter((m) => m.deviceId !== goneId);
      assert.equal(sent?.attempts, 2);
      assert.notEqual(sent?.sentAt, null);
    });

    it('quiet hours: approvals arrive silently, notes are only kept in the inbox', async () => {
      const owner = await ownerWithPasskey(t);
      const sub = push.newSubscription();
      await subscribe(t, owner, sub);
      const agent = await createAgent(t, owner, 'Night owl');
      // The fixed clock stands at 12:00 UTC: quiet from 11:00 to 13:00 UTC.
      expectStatus(await t.app.inject({ method: 'POST', url: '/api/settings/notifications', headers: owner.auth, payload: { quiet_hours: { start: '11:00', end: '13:00', tz: 'UTC' } } }), 200);
      await drain(t);
      const before = push.received(sub).length;
      const txn = await accessRequest(t, agent);
      await t.app.inject({ method: 'POST', url: '/api/v1/agent-notify', payload: { agent_id: agent.id, agent_jwt: await agent.jwt(), text: 'psst' } });
      await drain(t);
      const got = push.received(sub).slice(before) as Payload[];
      assert.deepEqual(got.map((p) => [p['type'], p['silent']]), [['approval', true]]);
      assert.equal(got[0]?.['txn_id'], txn);
      const inbox = json<{ items: { type: string }[] }>(await t.app.inject({ url: '/api/notifications', headers: owner.auth }));
      assert.equal(inbox.items[0]?.type, 'note', 'the note is in the inbox');
    });
  });
}

deliveryPath('sqlite');
deliveryPath('postgres');

describe('devices, push registration and test pushes', () => {
  let t: TestApp;
  let push: PushServiceStandIn;
  before(async () => {
    push = await startPushService();
    t = await testApp({ env: { OUTBOUND_ALLOW_LOOPBACK: 'true', OUTBOX_POLL_MS: '600000' } });
  });
  after(async () => {
    await t.close();
    await push.close();
  });

  it('publishes the VAPID public key (a P-256 point)', async () => {
    const res = await t.app.inject({ url: '/api/push/keys' });
    expectStatus(res, 200);
    const key = Buffer.from(json<{ vapid_public_key: string }>(res).vapid_public_key, 'base64url');
    assert.equal(key.length, 65);
    assert.equal(key[0], 4);
  });

  it('upserts by endpoint, lists every kind of device, removes any of them', async () => {
    const owner = await ownerWithPasskey(t);
    const sub = push.newSubscription();
    const id = await subscribe(t, owner, sub, 'Work laptop');
    assert.match(id, /^dev_[a-z2-7]{26}$/);
    assert.equal(await subscribe(t, owner, sub, 'Renamed'), id, 'the same endpoint keeps its device');
    const devices = json<{ id: string; kind: string; name: string; created_at: string; last_used_at: null }[]>(await t.app.inject({ url: '/api/devices', headers: owner.auth }));
    assert.equal(devices.length, 2);
    assert.deepEqual(Object.keys(devices[1]!).sort(), ['created_at', 'id', 'kind', 'last_used_at', 'name', 'paused_until']);
    assert.deepEqual({ ...devices[1], created_at: undefined }, { id, kind: 'webpush', name: 'Renamed', created_at: undefined, last_used_at: null, paused_until: null });
    // A device its push service keeps failing is paused (delivery/damping.ts): the owner sees until when.
    const until = t.clock.now() + 15 * 60_000;
    await t.services.store.pushDevices.damp(id, until);
    const paused = json<{ id: string; paused_until: string | null }[]>(await t.app.inject({ url: '/api/devices', headers: owner.auth }));
    assert.deepEqual(paused.map((d) => d.paused_until), [null, new Date(until).toISOString()]);
    t.clock.advance(15 * 60_000);
    const resumed = json<{ paused_until: string | null }[]>(await t.app.inject({ url: '/api/devices', headers: owner.auth }));
    assert.deepEqual(resumed.map((d) => d.paused_until), [null, null], 'a pause that ended is not shown');
    const other = await signUp(t.app);
    expectStatus(await t.app.inject({ method: 'DELETE', url: `/api/devices/${id}`, headers: other.auth }), 404);
    // A password session removes a notifying device (only passkeys need a passkey session).
    expectStatus(await t.app.inject({ method: 'DELETE', url: `/api/devices/${id}`, headers: owner.auth }), 200);
    // Anything else falls under the passkey rule: a password session learns nothing (passkeys.test.ts).
    expectStatus(await t.app.inject({ method: 'DELETE', url: `/api/devices/${id}`, headers: owner.auth }), 403);
    expectStatus(await t.app.inject({ method: 'DELETE', url: `/api/devices/${devices[0]!.id}`, headers: owner.auth }), 403);
    assert.equal(json<unknown[]>(await t.app.inject({ url: '/api/devices', headers: owner.auth })).length, 1);
  });

  it('unsubscribes one endpoint or all of them', async () => {
    const owner = await signUp(t.app);
    const [a, b, c] = [push.newSubscription(), push.newSubscription(), push.newSubscription()];
    for (const s of [a, b, c]) await subscribe(t, owner, s);
    const one = await t.app.inject({ method: 'POST', url: '/api/push/unsub', headers: owner.auth, payload: { endpoint: a.endpoint } });
    assert.deepEqual(json(one), { removed: 1 });
    assert.deepEqual(json(await t.app.inject({ method: 'POST', url: '/api/push/unsub', headers: owner.auth, payload: { endpoint: a.endpoint } })), { removed: 0 });
    assert.deepEqual(json(await t.app.inject({ method: 'POST', url: '/api/push/unsub', headers: owner.auth, payload: {} })), { removed: 2 });
    assert.deepEqual(json(await t.app.inject({ url: '/api/devices', headers: owner.auth })), []);
  });

  it('refuses bad subscriptions with a clear 4xx', async () => {
    const owner = await signUp(t.app);
    const good = push.newSubscription();
    const post = (payload: unknown) => t.app.inject({ method: 'POST', url: '/api/push', headers: owner.auth, payload: payload as Record<string, unknown> });
    const cases: [unknown, number, RegExp][] = [
      [{ ...good, endpoint: 'https://10.1.2.3/push/x' }, 400, /push endpoint/],
      [{ ...good, endpoint: 'https://[::ffff:192.168.0.1]/x' }, 400, /push endpoint/],
      [{ ...good, endpoint: 'ftp://push.example/x' }, 400, /https/],
      [{ ...good, endpoint: 'https://user:pw@push.example/x' }, 400, /push endpoint/],
      [{ ...good, endpoint: 'not a url' }, 400, /push endpoint/],
      [{ ...good, endpoint: `https://push.example/${'a'.repeat(3000)}` }, 422, /endpoint/],
      [{ ...good, keys: { p256dh: 'AAAA', auth: good.keys.auth } }, 400, /p256dh/],
      [{ ...good, keys: { p256dh: good.keys.p256dh, auth: 'short' } }, 400, /auth/],
      [{ ...good, keys: { p256dh: '!!!', auth: good.keys.auth } }, 400, /p256dh/],
      [{ endpoint: good.endpoint }, 422, /keys/],
      [{ ...good, name: 'x'.repeat(101) }, 422, /name/],
      [[1, 2], 422, /./],
    ];
    for (const [payload, status, detail] of cases) {
      const res = await post(payload);
      assert.equal(res.statusCode, status, `${JSON.stringify(payload).slice(0, 80)}: ${res.body}`);
      assert.match(res.body, detail);
    }
    expectStatus(await t.app.inject({ method: 'POST', url: '/api/push', payload: good }), 401);
    const huge = await t.app.inject({ method: 'POST', url: '/api/push', headers: { ...owner.auth, 'content-type': 'application/json' }, payload: JSON.stringify({ ...good, pad: 'x'.repeat(70_000) }) });
    assert.equal(huge.statusCode, 413);
  });

  it('refuses loopback endpoints unless OUTBOUND_ALLOW_LOOPBACK is on', async () => {
    const strict = await testApp();
    try {
      const owner = await signUp(strict.app);
      const res = await strict.app.inject({ method: 'POST', url: '/api/push', headers: owner.auth, payload: push.newSubscription() });
      expectStatus(res, 400);
      assert.match(json<{ detail: string }>(res).detail, /push endpoint/);
      const https = await strict.app.inject({ method: 'POST', url: '/api/push', headers: owner.auth, payload: { ...push.newSubscription(), endpoint: 'https://127.0.0.1/push/x' } });
      expectStatus(https, 400);
    } finally {
      await strict.close();
    }
  });

  it('an approval being sent when the request is answered is never retried after its dismissal', async () => {
    const owner = await ownerWithPasskey(t);
    const phone = push.newSubscription();
    await subscribe(t, owner, phone);
    const agent = await createAgent(t, owner, 'Slow');
    await t.services.outbox.drain();
    push.behave(phone, { hang: true });
    const seen = push.requests;
    const txn = await accessRequest(t, agent);
    while (push.requests === seen) await new Promise((r) => setTimeout(r, 10));
    // The approval is in flight (its send hangs until the 5 s timeout): the owner denies meanwhile.
    expectStatus(await respond(t, owner, txn, { approve: false }), 200);
    push.behave(phone, undefined);
    await t.services.outbox.drain();
    const [approval] = await t.services.store.outbox.list({ topic: txn, kind: 'approval' });
    assert.equal(approval?.sentAt, null, 'the hung send failed');
    // Past its retry time, well before the request's own expiry.
    t.clock.advance(60_000);
    await t.services.outbox.drain();
    const types = (push.received(phone) as Payload[]).filter((p) => p['txn_id'] === txn).map((p) => p['type']);
    assert.deepEqual(types, ['dismiss'], 'no approval after the dismissal');
    const [ended] = await t.services.store.outbox.list({ topic: txn, kind: 'approval' });
    assert.notEqual(ended?.failedAt, null);
  });

  it('caps notifying devices per owner', async () => {
    const owner = await signUp(t.app);
    for (let i = 0; i < 50; i++) await subscribe(t, owner, push.newSubscription());
    const res = await t.app.inject({ method: 'POST', url: '/api/push', headers: owner.auth, payload: push.newSubscription() });
    expectStatus(res, 409);
    assert.match(json<{ detail: string }>(res).detail, /remove one/);
  });

  it('sends a test push to each device at once and says how it went', async () => {
    const owner = await signUp(t.app);
    assert.deepEqual(json(await t.app.inject({ method: 'POST', url: '/api/push/test', headers: owner.auth })), { sent: 0, failed: 0, devices: [] });
    const ok = push.newSubscription();
    const dead = push.newSubscription();
    await subscribe(t, owner, ok);
    const deadId = await subscribe(t, owner, dead);
    push.behave(dead, { status: 404 });
    const res = await t.app.inject({ method: 'POST', url: '/api/push/test', headers: owner.auth });
    expectStatus(res, 200);
    const body = json<{ sent: number; failed: number; devices: { id: string; outcome: string }[] }>(res);
    assert.equal(body.sent, 1);
    assert.equal(body.failed, 1);
    assert.equal(body.devices.find((d) => d.id === deadId)?.outcome, 'gone');
    const [payload] = push.received(ok) as Payload[];
    assert.equal(payload?.['type'], 'test');
    assert.equal(payload?.['title'], 'Mandate test notification');
    assert.equal(json<unknown[]>(await t.app.inject({ url: '/api/devices', headers: owner.auth })).length, 1, 'the 404 device is removed');
  });

  it('keeps the VAPID keys across restarts, encrypted under KEY_ENCRYPTION_KEY', async () => {
    // A second app over the same store: a restart, or another node.
    const first = await testApp();
    try {
      const key = first.services.vapidPublicKey;
      const store = first.services.store;
      assert.equal((await store.serviceSecrets.get('vapid'))?.encrypted, false);
      const again = await buildApp({ config: parseConfig({ LOG_LEVEL: 'silent', KEY_ENCRYPTION_KEY: 'a-long-enough-secret-key' }), store, logger: false });
      assert.equal(again.services.vapidPublicKey, key);
      const stored = await store.serviceSecrets.get('vapid');
      assert.equal(stored?.encrypted, true);
      assert.doesNotMatch(stored!.value, /privateKey/);
      await again.app.close();
      await assert.rejects(buildApp({ config: parseConfig({ LOG_LEVEL: 'silent' }), store, logger: false }), /KEY_ENCRYPTION_KEY/);
    } finally {
      await first.close();
    }
  });
});

describe('Android: FCM, asset links, app download', () => {
  let t: TestApp;
  let fcm: FcmStandIn;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mandate-fcm-'));
    const clock = new FixedClock();
    fcm = await startFcmStandIn({ clock });
    const file = join(dir, 'service-account.json');
    writeFileSync(file, fcm.serviceAccountJson());
    writeFileSync(join(dir, 'app.apk'), Buffer.from('PK\u0003\u0004 pretend apk'));
    t = await testApp({
      clock,
      env: {
        OUTBOX_POLL_MS: '600000',
        FCM_PROJECT_ID: fcm.projectId,
        FCM_SERVICE_ACCOUNT_FILE: file,
        FCM_API_BASE: fcm.apiBase,
        FCM_TOKEN_URL: fcm.tokenUrl,
        ANDROID_PACKAGE_NAME: 'com.example.mandate',
        ANDROID_CERT_SHA256: Array(32).fill('AB').join(':'),
        ANDROID_APK_PATH: join(dir, 'app.apk'),
      },
    });
  });
  after(async () => {
    await t.close();
    await fcm.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('registers the app and delivers approvals as FCM v1 data messages; UNREGISTERED removes it', async () => {
    const owner = await ownerWithPasskey(t);
    const token = `fcm-token-${'x'.repeat(40)}`;
    const res = await t.app.inject({ method: 'POST', url: '/api/fcm', headers: owner.auth, payload: { token, name: 'Pixel' } });
    expectStatus(res, 200);
    const deviceId = json<{ device_id: string }>(res).device_id;
    assert.equal(json<{ device_id: string }>(await t.app.inject({ method: 'POST', url: '/api/fcm', headers: owner.auth, payload: { token } })).device_id, deviceId);
    const agent = await createAgent(t, owner, 'Droid');
    const txn = await accessRequest(t, agent);
    await t.services.outbox.drain();
    const approval = fcm.messages().find((m) => m.data['type'] === 'approval');
    assert.equal(approval?.token, token);
    assert.equal(approval?.data['txn_id'], txn);
    assert.equal(approval?.data['title'], 'Droid asks for access to shop.example');
    assert.equal(approval?.android.priority, 'high');
    assert.deepEqual(fcm.rejections, []);
    assert.equal(fcm.exchanges, 1);
    fcm.unregister(token);
    await t.app.inject({ method: 'POST', url: '/api/v1/agent-notify', payload: { agent_id: agent.id, agent_jwt: await agent.jwt(), text: 'hi' } });
    await t.services.outbox.drain();
    const kinds = json<{ kind: string }[]>(await t.app.inject({ url: '/api/devices', headers: owner.auth })).map((d) => d.kind);
    assert.deepEqual(kinds, ['passkey']);
  });

  it('refuses a malformed token', async () => {
    const owner = await signUp(t.app);
    const res = await t.app.inject({ method: 'POST', url: '/api/fcm', headers: owner.auth, payload: { token: 'bad token with spaces' } });
    expectStatus(res, 400);
    assert.match(json<{ detail: string }>(res).detail, /FCM registration token/);
  });

  it('serves asset links and the app package', async () => {
    const links = await t.app.inject({ url: '/.well-known/assetlinks.json' });
    expectStatus(links, 200);
    assert.match(String(links.headers['content-type']), /application\/json/);
    const [entry] = json<{ target: { package_name: string; sha256_cert_fingerprints: string[] }; relation: string[] }[]>(links);
    assert.equal(entry?.target.package_name, 'com.example.mandate');
    assert.deepEqual(entry?.target.sha256_cert_fingerprints, [Array(32).fill('AB').join(':')]);
    assert.ok(entry?.relation.includes('delegate_permission/common.get_login_creds'));
    const apk = await t.app.inject({ url: '/download/android' });
    expectStatus(apk, 200);
    assert.equal(apk.headers['content-type'], 'application/vnd.android.package-archive');
    assert.equal(apk.headers['content-disposition'], 'attachment; filename="mandate.apk"');
    assert.equal(apk.rawPayload.subarray(0, 4).toString('latin1'), 'PK\u0003\u0004');
  });

  it('without Android settings: an empty list, a 404 naming the setting, a 409 for FCM', async () => {
    const bare = await testApp();
    try {
      assert.deepEqual(json(await bare.app.inject({ url: '/.well-known/assetlinks.json' })), []);
      const apk = await bare.app.inject({ url: '/download/android' });
      expectStatus(apk, 404);
      assert.match(json<{ detail: string }>(apk).detail, /ANDROID_APK_PATH/);
      const owner = await signUp(bare.app);
      const res = await bare.app.inject({ method: 'POST', url: '/api/fcm', headers: owner.auth, payload: { token: 'x'.repeat(40) } });
      expectStatus(res, 409);
      assert.match(json<{ detail: string }>(res).detail, /FCM_PROJECT_ID/);
    } finally {
      await bare.close();
    }
  });
});

describe('notification inbox, settings and service-worker reports', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp({ env: { OUTBOX_POLL_MS: '600000' } });
  });
  after(() => t.close());

  const note = async (agent: Awaited<ReturnType<typeof createAgent>>, text: string) =>
    expectStatus(await t.app.inject({ method: 'POST', url: '/api/v1/agent-notify', payload: { agent_id: agent.id, agent_jwt: await agent.jwt(), text } }), 200);

  it('lists newest first in pages, counts unread in /api/me, marks read by ids, txns or all', async () => {
    const owner = await ownerWithPasskey(t);
    const agent = await createAgent(t, owner, 'Writer');
    for (let i = 0; i < 4; i++) await note(agent, `note ${i}`);
    const txn = await accessRequest(t, agent);
    const page1 = json<{ items: { id: string; seq: number; type: string; body: string; txn_id?: string }[]; next_before: number; unread: number }>(await t.app.inject({ url: '/api/notifications?limit=3', headers: owner.auth }));
    assert.deepEqual(page1.items.map((n) => n.type), ['approval', 'note', 'note']);
    assert.equal(page1.items[0]?.txn_id, txn);
    assert.equal(page1.next_before, page1.items[2]!.seq);
    // Types in all: security (the passkey), agent_added, 4 notes, approval.
    assert.equal(page1.unread, 7);
    const page2 = json<{ items: { type: string; body: string }[]; next_before: number | null }>(await t.app.inject({ url: `/api/notifications?limit=3&before=${page1.next_before}`, headers: owner.auth }));
    assert.deepEqual(page2.items.map((n) => n.body), ['note 1', 'note 0', 'Writer was added to your account in the app. Not you? Remove it under Agents.']);
    const me = json<{ unread_notifications: number }>(await t.app.inject({ url: '/api/me', headers: owner.auth }));
    assert.equal(me.unread_notifications, 7);
    const read = (payload?: unknown) => t.app.inject({ method: 'POST', url: '/api/notifications/read', headers: owner.auth, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
    assert.deepEqual(json(await read({ txn_ids: [txn] })), { marked: 1 });
    assert.deepEqual(json(await read({ ids: [page1.items[1]!.id, 'n_unknown'] })), { marked: 1 });
    assert.equal((await read({ ids: [], txn_ids: [] })).statusCode, 422, 'one kind of list at a time');
    assert.deepEqual(json(await read({})), { marked: 5 });
    assert.deepEqual(json(await read()), { marked: 0 });
    const other = await signUp(t.app);
    assert.deepEqual(json(await t.app.inject({ url: '/api/notifications', headers: other.auth })), { items: [], next_before: null, unread: 0 });
    for (const bad of ['limit=0', 'limit=101', 'before=-1', 'limit=abc']) expectStatus(await t.app.inject({ url: `/api/notifications?${bad}`, headers: owner.auth }), 422);
    expectStatus(await t.app.inject({ url: '/api/notifications' }), 401);
  });

  it('keeps 30 days: older ones are not listed and the sweep purges them', async () => {
    const owner = await signUp(t.app);
    const agent = await createAgent(t, owner, 'Old');
    await note(agent, 'ancient');
    t.clock.advance(31 * 86_400_000);
    await note(agent, 'fresh');
    // (The session has expired by now: the inbox is read through the domain.)
    const { items } = await t.services.inbox.page(owner.user.id, 0, 30);
    assert.deepEqual(items.map((n) => n.body), ['fresh']);
    const swept = await purgeExpired(t.services.store, t.clock);
    assert.ok(swept['notifications']! >= 2);
  });

  it('changes settings, checks them, and never lets approvals go silent while agents exist', async () => {
    const owner = await signUp(t.app);
    const get = async () => json(await t.app.inject({ url: '/api/settings/notifications', headers: owner.auth }));
    assert.deepEqual(await get(), { approvals: true, notes: true, session_notices: true, quiet_hours: null });
    const post = (payload: Record<string, unknown>) => t.app.inject({ method: 'POST', url: '/api/settings/notifications', headers: owner.auth, payload });
    const set = await post({ notes: false, quiet_hours: { start: '22:30', end: '07:00', tz: 'Europe/Paris' } });
    expectStatus(set, 200);
    assert.deepEqual(json(set), { approvals: true, notes: false, session_notices: true, quiet_hours: { start: '22:30', end: '07:00', tz: 'Europe/Paris' } });
    expectStatus(await post({ approvals: false }), 200);
    await createAgent(t, owner, 'Needs you');
    const refused = await post({ approvals: false });
    expectStatus(refused, 400);
    assert.match(json<{ detail: string }>(refused).detail, /while you have agents/);
    expectStatus(await post({ approvals: true }), 200);
    const bad: [Record<string, unknown>, number][] = [
      [{ quiet_hours: { start: '25:00', end: '07:00', tz: 'UTC' } }, 422],
      [{ quiet_hours: { start: '07:00', end: '07:00', tz: 'UTC' } }, 400],
      [{ quiet_hours: { start: '22:00', end: '07:00', tz: 'Mars/Olympus' } }, 400],
      [{ approvals: 'yes' }, 422],
      [{ unknown: true }, 422],
    ];
    for (const [payload, status] of bad) assert.equal((await post(payload)).statusCode, status, JSON.stringify(payload));
    expectStatus(await post({ quiet_hours: null }), 200);
    assert.equal((await get() as { quiet_hours: unknown }).quiet_hours, null);
  });

  it('counts service-worker reports, without a session, within 2 kB', async () => {
    const before = await t.services.store.counters.current('sw:push-received');
    const res = await t.app.inject({ method: 'POST', url: '/api/sw/push-received', payload: { detail: 'ok' } });
    expectStatus(res, 204);
    expectStatus(await t.app.inject({ method: 'POST', url: '/api/sw/push-received' }), 204);
    assert.equal(await t.services.store.counters.current('sw:push-received'), before + 2);
    expectStatus(await t.app.inject({ method: 'POST', url: '/api/sw/made-up' }), 422);
    const big = await t.app.inject({ method: 'POST', url: '/api/sw/error', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ detail: 'x'.repeat(3000) }) });
    expectStatus(big, 413);
  });
});
