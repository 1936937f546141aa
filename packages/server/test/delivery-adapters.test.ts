/**
 * The push transports end to end against local stand-ins: web push through the real outbound guard
 * to a push service that checks VAPID and decrypts on its own, FCM through a token endpoint and send
 * API that verify what Google would. The stand-ins' own checks are tested too, so that a transport
 * passing here means the requests really are right.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createPrivateKey, generateKeyPairSync, sign } from 'node:crypto';
import webpush from 'web-push';
import { fcmTransport, parseServiceAccount } from '../src/delivery/fcm.ts';
import type { PushOptions, PushPayload, SendResult } from '../src/delivery/push-port.ts';
import { generateVapidKeys, isValidVapidKeyPair, MAX_PAYLOAD_BYTES, webPushTransport } from '../src/delivery/web-push.ts';
import { guardedFetch } from '../src/outbound/guarded-fetch.ts';
import { OutboundError, type OutboundFetch, type OutboundRefusal } from '../src/outbound/types.ts';
import { startFcmStandIn, type FcmStandIn } from './helpers/stand-ins/fcm.ts';
import { startPushService, type PushServiceStandIn, type SubscriptionJson } from './helpers/stand-ins/push-service.ts';

const SUBJECT = 'mailto:operator@example.com';
const OPTIONS: PushOptions = { ttlSec: 3600, urgency: 'high', topic: 'n_abc' };
const payload = (over: Partial<PushPayload> = {}): PushPayload => ({
  type: 'approval',
  id: 'n_1',
  title: 'Shop bot asks to pay 12.00 €',
  body: 'at demo-shop.example',
  url: '/app#requests/t_1',
  kind: 'access',
  txn_id: 't_1',
  expires_at: '2026-11-22T12:05:00.000Z',
  ...over,
});
const target = (s: SubscriptionJson) => ({ endpoint: s.endpoint, p256dh: s.keys.p256dh, auth: s.keys.auth });
const loopback = guardedFetch({ allowLoopback: true }, { timeoutMs: 400 });

/** No detail may carry a key, a token, the payload or the endpoint's secret path. */
function assertNoSecrets(result: SendResult, secrets: string[]): void {
  if (result.outcome === 'sent') return;
  for (const s of secrets) assert.ok(!result.detail.includes(s), `detail leaks a secret: ${result.detail}`);
  assert.ok(!/vapid t=|Bearer /i.test(result.detail), `detail leaks a credential: ${result.detail}`);
}

describe('web push transport', () => {
  let service: PushServiceStandIn;
  const vapid = { ...generateVapidKeys(), subject: SUBJECT };
  before(async () => {
    service = await startPushService({ vapidPublicKey: vapid.publicKey });
  });
  after(() => service.close());

  it('delivers a payload the push service decrypts to exactly what was sent', async () => {
    const push = webPushTransport({ vapid, fetch: loopback });
    const sub = service.newSubscription('laptop');
    const sent = payload({ title: 'Zahlung: 12,00 € ✓', silent: true });
    assert.deepEqual(await push.send(target(sub), sent, OPTIONS), { outcome: 'sent' });
    assert.deepEqual(await push.send(target(sub), payload({ type: 'dismiss' }), { ttlSec: 0, urgency: 'low' }), { outcome: 'sent' });
    assert.deepEqual(service.rejections, []);
    assert.deepEqual(service.received(sub), [sent, payload({ type: 'dismiss' })]);
    const [first, second] = service.all().filter((d) => d.endpoint === sub.endpoint);
    assert.deepEqual([first?.ttl, first?.urgency, first?.topic, first?.name], [3600, 'high', 'n_abc', 'laptop']);
    assert.deepEqual([second?.ttl, second?.urgency, second?.topic], [0, 'low', undefined]);
    // One VAPID token per push service (RFC 8292 §2 allows reuse): signed once, not per push.
    assert.equal(first?.vapidJwt, second?.vapidJwt);
    const claims = JSON.parse(Buffer.from(first?.vapidJwt.split('.')[1] ?? '', 'base64url').toString()) as { exp: number; sub: string; aud: string };
    assert.deepEqual([claims.sub, claims.aud], [SUBJECT, service.origin]);
    assert.ok(claims.exp > Date.now() / 1000 + 11 * 3600, 'valid for hours: kept at most one of them');
  });

  it('sends a payload of exactly the limit as one record, and refuses one byte more without sending', async () => {
    const push = webPushTransport({ vapid, fetch: loopback });
    const sub = service.newSubscription();
    const base = Buffer.byteLength(JSON.stringify(payload({ body: '' })));
    const atLimit = payload({ body: 'x'.repeat(MAX_PAYLOAD_BYTES - base) });
    assert.equal(Buffer.byteLength(JSON.stringify(atLimit)), MAX_PAYLOAD_BYTES);
    assert.deepEqual(await push.send(target(sub), atLimit, OPTIONS), { outcome: 'sent' });
    assert.deepEqual(service.received(sub), [atLimit]);
    const before = service.requests;
    const over = await push.send(target(sub), payload({ body: `${atLimit.body}é` }), OPTIONS);
    assert.equal(over.outcome, 'failed');
    assert.match(over.outcome === 'failed' ? over.detail : '', /over the web push limit of 3993/);
    assert.equal(service.requests, before, 'nothing was sent');
  });

  it('is refused when its VAPID key is not the one the subscription was made with', async () => {
    const other = { ...generateVapidKeys(), subject: SUBJECT };
    const sub = service.newSubscription();
    const result = await webPushTransport({ vapid: other, fetch: loopback }).send(target(sub), payload(), OPTIONS);
    assert.equal(result.outcome, 'failed');
    assert.match(result.outcome === 'failed' ? result.detail : '', /answered 400/);
    assert.match(service.rejections.at(-1)?.reason ?? '', /VAPID k is not the key/);
    assertNoSecrets(result, [other.privateKey, other.publicKey, sub.keys.p256dh, sub.keys.auth, sub.endpoint]);
  });

  it('refuses unusable VAPID configuration at construction', () => {
    const a = generateVapidKeys();
    const b = generateVapidKeys();
    assert.equal(isValidVapidKeyPair(a.publicKey, a.privateKey), true);
    assert.equal(isValidVapidKeyPair(a.publicKey, b.privateKey), false);
    assert.equal(isValidVapidKeyPair(a.publicKey.slice(1), a.privateKey), false);
    assert.throws(() => webPushTransport({ vapid: { publicKey: a.publicKey, privateKey: b.privateKey, subject: SUBJECT }, fetch: loopback }), /public key is not the private key/);
    assert.throws(() => webPushTransport({ vapid: { ...a, subject: 'http://example.com' }, fetch: loopback }), /mailto: or https:/);
    assert.throws(() => webPushTransport({ vapid: { ...a, subject: 'operator@example.com' }, fetch: loopback }), /mailto: or https:/);
  });

  it('maps the push service answers to outcomes', async () => {
    const push = webPushTransport({ vapid, fetch: loopback });
    const cases: [Parameters<PushServiceStandIn['behave']>[1], SendResult['outcome'], number | undefined][] = [
      [{ status: 404 }, 'gone', undefined],
      [{ status: 410, body: 'push subscription has unsubscribed or expired.' }, 'gone', undefined],
      [{ status: 500 }, 'retry', undefined],
      [{ status: 503, retryAfter: '7' }, 'retry', 7000],
      [{ status: 429, retryAfter: '120' }, 'retry', 120_000],
      [{ status: 400 }, 'failed', undefined],
      [{ status: 403 }, 'failed', undefined],
      [{ status: 413 }, 'failed', undefined],
      [{ status: 202 }, 'sent', undefined],
    ];
    for (const [behaviour, outcome, retryAfterMs] of cases) {
      const sub = service.newSubscription();
      service.behave(sub, behaviour);
      const result = await push.send(target(sub), payload(), OPTIONS);
      assert.equal(result.outcome, outcome, JSON.stringify(behaviour));
      assert.equal(result.outcome === 'retry' ? result.retryAfterMs : undefined, retryAfterMs, JSON.stringify(behaviour));
      assertNoSecrets(result, [vapid.privateKey, sub.keys.p256dh, sub.keys.auth, sub.endpoint, 'Shop bot']);
    }
    assert.deepEqual(service.rejections.filter((r) => r.reason !== 'VAPID k is not the key this subscription was made with'), []);
  });

  it('reads a Retry-After date against its clock', async () => {
    const now = Date.UTC(2026, 10, 22, 12, 0, 0);
    const push = webPushTransport({ vapid, fetch: loopback, clock: { now: () => now } });
    const sub = service.newSubscription();
    service.behave(sub, { status: 429, retryAfter: new Date(now + 90_000).toUTCString() });
    assert.deepEqual(await push.send(target(sub), payload(), OPTIONS), { outcome: 'retry', detail: `push service ${service.origin} answered 429`, retryAfterMs: 90_000 });
  });

  it('retries when the push service never answers (the guard times out)', async () => {
    const sub = service.newSubscription();
    service.behave(sub, { hang: true });
    const result = await webPushTransport({ vapid, fetch: loopback }).send(target(sub), payload(), OPTIONS);
    assert.deepEqual(result, { outcome: 'retry', detail: `push to ${service.origin} not completed: timeout` });
  });

  it('maps guard refusals: passing ones retry, the others fail', async () => {
    const sub = service.newSubscription();
    const expected: Record<OutboundRefusal, SendResult['outcome']> = { timeout: 'retry', network: 'retry', dns: 'retry', address: 'failed', scheme: 'failed', url: 'failed', too_large: 'failed' };
    for (const [reason, outcome] of Object.entries(expected) as [OutboundRefusal, SendResult['outcome']][]) {
      const refusing: OutboundFetch = () => Promise.reject(new OutboundError(reason, `refused ${sub.endpoint}`));
      const result = await webPushTransport({ vapid, fetch: refusing }).send(target(sub), payload(), OPTIONS);
      assert.equal(result.outcome, outcome, reason);
      assertNoSecrets(result, [sub.endpoint]);
    }
    // The real guard, without loopback allowed: the stand-in's http: endpoint is refused for good.
    const strict = await webPushTransport({ vapid, fetch: guardedFetch({ allowLoopback: false }) }).send(target(sub), payload(), OPTIONS);
    assert.equal(strict.outcome, 'failed');
    assert.deepEqual(service.received(sub), []);
  });

  it('fails a subscription whose keys cannot be used, without quoting them', async () => {
    const sub = service.newSubscription();
    const result = await webPushTransport({ vapid, fetch: loopback }).send({ ...target(sub), p256dh: sub.keys.p256dh.slice(0, 40) }, payload(), OPTIONS);
    assert.equal(result.outcome, 'failed');
    assert.match(result.outcome === 'failed' ? result.detail : '', /p256dh/);
    assertNoSecrets(result, [sub.keys.p256dh.slice(0, 40), sub.endpoint]);
  });
});

/** A VAPID header made by hand, so each of the stand-in's checks can be shown to refuse. */
function handMadeVapid(keys: { publicKey: string; privateKey: string }, claims: Record<string, unknown>): string {
  const pub = Buffer.from(keys.publicKey, 'base64url');
  const jwk = { kty: 'EC', crv: 'P-256', x: pub.subarray(1, 33).toString('base64url'), y: pub.subarray(33).toString('base64url'), d: keys.privateKey };
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const input = `${part({ typ: 'JWT', alg: 'ES256' })}.${part(claims)}`;
  const signature = sign('sha256', Buffer.from(input), { key: createPrivateKey({ key: jwk, format: 'jwk' }), dsaEncoding: 'ieee-p1363' });
  return `vapid t=${input}.${signature.toString('base64url')}, k=${keys.publicKey}`;
}

describe('push service stand-in checks', () => {
  let service: PushServiceStandIn;
  const keys = generateVapidKeys();
  before(async () => {
    service = await startPushService();
  });
  after(() => service.close());

  async function post(sub: SubscriptionJson, over: { headers?: Record<string, string | undefined>; body?: Buffer }): Promise<{ status: number; reason: string }> {
    const encrypted = webpush.encrypt(sub.keys.p256dh, sub.keys.auth, JSON.stringify(payload()), 'aes128gcm').cipherText;
    const exp = Math.floor(Date.now() / 1000) + 3600;
    const headers: Record<string, string | undefined> = {
      authorization: handMadeVapid(keys, { aud: service.origin, exp, sub: SUBJECT }),
      'content-encoding': 'aes128gcm',
      ttl: '60',
      ...over.headers,
    };
    const defined = Object.fromEntries(Object.entries(headers).filter((e): e is [string, string] => e[1] !== undefined));
    const response = await loopback(sub.endpoint, { method: 'POST', headers: defined, body: over.body ?? encrypted });
    return { status: response.status, reason: response.body.toString() };
  }

  it('accepts a correct hand-made request', async () => {
    const sub = service.newSubscription();
    assert.equal((await post(sub, {})).status, 201);
    assert.deepEqual(service.received(sub), [payload()]);
  });

  it('refuses every fault a strict push service refuses', async () => {
    const now = Math.floor(Date.now() / 1000);
    const other = generateVapidKeys();
    const sub = service.newSubscription();
    const stranger = service.newSubscription();
    const encrypted = webpush.encrypt(sub.keys.p256dh, sub.keys.auth, 'x', 'aes128gcm').cipherText;
    const tampered = Buffer.from(encrypted);
    tampered[tampered.length - 1] = (tampered[tampered.length - 1] ?? 0) ^ 1; // the tag
    const faults: [string, Parameters<typeof post>[1], RegExp][] = [
      ['no Authorization', { headers: { authorization: undefined } }, /not a vapid scheme/],
      ['subject not mailto:/https:', { headers: { authorization: handMadeVapid(keys, { aud: service.origin, exp: now + 60, sub: 'http://example.com' }) } }, /sub .* is not mailto/],
      ['another audience', { headers: { authorization: handMadeVapid(keys, { aud: 'https://push.example.net', exp: now + 60, sub: SUBJECT }) } }, /aud is/],
      ['expired', { headers: { authorization: handMadeVapid(keys, { aud: service.origin, exp: now - 1, sub: SUBJECT }) } }, /exp is missing or past/],
      ['over 24 h', { headers: { authorization: handMadeVapid(keys, { aud: service.origin, exp: now + 25 * 3600, sub: SUBJECT }) } }, /24 hours/],
      ['k of another key', { headers: { authorization: handMadeVapid(keys, { aud: service.origin, exp: now + 60, sub: SUBJECT }).replace(keys.publicKey, other.publicKey) } }, /does not verify/],
      ['aesgcm', { headers: { 'content-encoding': 'aesgcm' } }, /not aes128gcm/],
      ['no TTL', { headers: { ttl: undefined } }, /TTL/],
      ['tampered body', { body: tampered }, /does not decrypt/],
      ['not JSON', { body: encrypted }, /not JSON/],
    ];
    for (const [what, over, reason] of faults) {
      const answer = await post(sub, over);
      assert.equal(answer.status, 400, what);
      assert.match(answer.reason, reason, what);
    }
    // Encrypted for another subscription's keys: decrypting with this one's must fail.
    const forStranger = webpush.encrypt(stranger.keys.p256dh, stranger.keys.auth, JSON.stringify(payload()), 'aes128gcm').cipherText;
    assert.match((await post(sub, { body: forStranger })).reason, /does not decrypt/);
    assert.deepEqual(service.received(sub), []);
    assert.equal(service.rejections.length, faults.length + 1);
  });
});

describe('FCM transport', () => {
  let fcm: FcmStandIn;
  const clock = { t: Date.now(), now(): number { return this.t; } };
  const transport = () =>
    fcmTransport({ projectId: fcm.projectId, serviceAccount: parseServiceAccount(fcm.serviceAccountJson()), apiBase: fcm.apiBase, tokenUrl: fcm.tokenUrl, clock });
  before(async () => {
    fcm = await startFcmStandIn({ clock, expiresIn: 3600 });
  });
  after(() => fcm.close());

  it('exchanges one access token and sends data-only messages with it', async () => {
    const push = transport();
    const before = fcm.exchanges;
    assert.deepEqual(await push.send({ token: 'reg-phone-1' }, payload({ silent: true }), OPTIONS), { outcome: 'sent' });
    assert.deepEqual(await push.send({ token: 'reg-phone-1' }, payload({ type: 'dismiss' }), { ttlSec: 60, urgency: 'normal' }), { outcome: 'sent' });
    assert.deepEqual(await push.send({ token: 'reg-phone-2' }, payload(), OPTIONS), { outcome: 'sent' });
    assert.equal(fcm.exchanges - before, 1);
    assert.deepEqual(fcm.rejections, []);
    const [first, second] = fcm.messages().filter((m) => m.token === 'reg-phone-1');
    const { silent: _silent, ...rest } = payload({ silent: true });
    assert.deepEqual(first?.data, { ...rest, silent: 'true' });
    assert.deepEqual(first?.android, { priority: 'high', ttl: '3600s', collapse_key: 'n_abc' });
    assert.deepEqual(second?.android, { priority: 'normal', ttl: '60s' });
    assert.equal(first?.accessToken, second?.accessToken);
  });

  it('sends the details an approval is bound to as JSON text, as every data value is a string', async () => {
    const details = { summary: 'Pay 12.00 EUR\nto ACME', digest: 'p4S9sS3L3hZ0hJ0tqv3Z8bYQy2a4rM7pN1eW6kD5cXg' };
    assert.deepEqual(await transport().send({ token: 'reg-phone-details' }, payload({ details }), OPTIONS), { outcome: 'sent' });
    const sent = fcm.messages().find((m) => m.token === 'reg-phone-details');
    assert.equal(typeof sent?.data['details'], 'string');
    assert.deepEqual(JSON.parse(sent?.data['details'] ?? ''), details);
  });

  it('renews the access token 60 s before it ends', async () => {
    const push = transport();
    const before = fcm.exchanges;
    await push.send({ token: 'reg-a' }, payload(), OPTIONS);
    clock.t += 3530_000;
    await push.send({ token: 'reg-a' }, payload(), OPTIONS);
    assert.equal(fcm.exchanges - before, 1, 'still valid for 70 s: kept');
    clock.t += 20_000;
    assert.deepEqual(await push.send({ token: 'reg-a' }, payload(), OPTIONS), { outcome: 'sent' });
    assert.equal(fcm.exchanges - before, 2, '50 s left: renewed');
    assert.deepEqual(fcm.rejections, []);
  });

  it('lets concurrent sends share one exchange', async () => {
    const push = transport();
    const before = fcm.exchanges;
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => push.send({ token: `reg-c${i}` }, payload(), OPTIONS)));
    assert.deepEqual(results, Array(12).fill({ outcome: 'sent' }));
    assert.equal(fcm.exchanges - before, 1);
  });

  it('removes unregistered tokens, retries passing errors, fails the rest', async () => {
    const push = transport();
    fcm.unregister('reg-gone');
    const gone = await push.send({ token: 'reg-gone' }, payload(), OPTIONS);
    assert.equal(gone.outcome, 'gone');
    assert.match(gone.outcome === 'gone' ? gone.detail : '', /404 NOT_FOUND\/UNREGISTERED/);
    const cases: [Parameters<FcmStandIn['script']>[0], SendResult['outcome'], number | undefined][] = [
      [{ status: 400, errorCode: 'UNREGISTERED' }, 'gone', undefined],
      [{ status: 404 }, 'gone', undefined],
      [{ status: 400, errorCode: 'INVALID_ARGUMENT' }, 'failed', undefined],
      [{ status: 403, errorCode: 'SENDER_ID_MISMATCH' }, 'failed', undefined],
      [{ status: 500, errorCode: 'INTERNAL' }, 'retry', undefined],
      [{ status: 503, errorCode: 'UNAVAILABLE', retryAfter: '10' }, 'retry', 10_000],
      [{ status: 429, errorCode: 'QUOTA_EXCEEDED', retryAfter: '30' }, 'retry', 30_000],
    ];
    for (const [answer, outcome, retryAfterMs] of cases) {
      fcm.script(answer);
      const result = await push.send({ token: 'reg-secret-token-123' }, payload(), OPTIONS);
      assert.equal(result.outcome, outcome, JSON.stringify(answer));
      assert.equal(result.outcome === 'retry' ? result.retryAfterMs : undefined, retryAfterMs, JSON.stringify(answer));
      assertNoSecrets(result, ['reg-secret-token-123', 'ya29.']);
    }
  });

  it('drops a refused access token and tries once more; a second refusal fails', async () => {
    const push = transport();
    await push.send({ token: 'reg-r' }, payload(), OPTIONS);
    const before = fcm.exchanges;
    fcm.revokeAccessTokens();
    assert.deepEqual(await push.send({ token: 'reg-r' }, payload(), OPTIONS), { outcome: 'sent' });
    assert.equal(fcm.exchanges - before, 1);
    fcm.script({ status: 401 }, { status: 401 });
    const twice = await push.send({ token: 'reg-r' }, payload(), OPTIONS);
    assert.equal(twice.outcome, 'failed');
    assert.equal(fcm.exchanges - before, 2);
    fcm.rejections.length = 0; // the revoked token's 401 was the point
  });

  it('fails when the token endpoint refuses the assertion (the key is not the account\'s)', async () => {
    const account = parseServiceAccount(fcm.serviceAccountJson());
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const forged = { ...account, private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
    const push = fcmTransport({ projectId: fcm.projectId, serviceAccount: forged, apiBase: fcm.apiBase, tokenUrl: fcm.tokenUrl, clock });
    const result = await push.send({ token: 'reg-f' }, payload(), OPTIONS);
    assert.equal(result.outcome, 'failed');
    assert.match(result.outcome === 'failed' ? result.detail : '', /token exchange answered 400 \(invalid_grant/);
    assert.match(fcm.rejections.at(-1)?.reason ?? '', /signature verification failed/);
    fcm.rejections.length = 0;
  });

  it('retries when FCM cannot be reached or does not answer in time', async () => {
    const unreachable = fcmTransport({ projectId: 'p', serviceAccount: parseServiceAccount(fcm.serviceAccountJson()), apiBase: 'http://127.0.0.1:9', tokenUrl: 'http://127.0.0.1:9/token', clock });
    assert.deepEqual(await unreachable.send({ token: 'reg-u' }, payload(), OPTIONS), { outcome: 'retry', detail: 'FCM token exchange not completed: network' });
    const slow: typeof fetch = () => Promise.reject(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
    const timedOut = fcmTransport({ projectId: 'p', serviceAccount: parseServiceAccount(fcm.serviceAccountJson()), clock, fetch: slow });
    assert.deepEqual(await timedOut.send({ token: 'reg-u' }, payload(), OPTIONS), { outcome: 'retry', detail: 'FCM token exchange not completed: timeout' });
  });

  it('refuses a bad service account file with a message naming the fault, never its content', () => {
    const good = JSON.parse(fcm.serviceAccountJson()) as Record<string, unknown>;
    const without = (...names: string[]) => JSON.stringify(Object.fromEntries(Object.entries(good).filter(([k]) => !names.includes(k))));
    assert.throws(() => parseServiceAccount(`${JSON.stringify(good).slice(0, 200)}`), (e: Error) => /not valid JSON/.test(e.message) && !e.message.includes('PRIVATE'));
    assert.throws(() => parseServiceAccount('[]'), /not a JSON object/);
    assert.throws(() => parseServiceAccount(without('client_email', 'private_key_id')), /missing client_email, private_key_id/);
    assert.throws(() => parseServiceAccount(without('private_key')), /missing private_key/);
    assert.throws(() => parseServiceAccount(JSON.stringify({ ...good, type: 'authorized_user' })), /type is "authorized_user", expected "service_account"/);
    assert.throws(() => parseServiceAccount(JSON.stringify({ ...good, private_key: 'not a key' })), (e: Error) => /PKCS#8 PEM/.test(e.message) && !e.message.includes('not a key'));
    const account = parseServiceAccount(fcm.serviceAccountJson());
    assert.equal(account.client_email, good.client_email);
    assert.equal(account.token_uri, fcm.tokenUrl);
  });
});
