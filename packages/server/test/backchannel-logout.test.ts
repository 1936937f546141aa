import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp, type Built } from '../src/app.ts';
import { parseConfig } from '../src/config/config.ts';
import { FixedClock } from '../src/clock.ts';
import { BACKCHANNEL_LOGOUT_WINDOW_MS, queueBackchannelLogout } from '../src/domain/oidc/logout.ts';
import { openPostgresStore } from '../src/store/postgres/open.ts';
import type { OutboxMessage, Store } from '../src/store/ports/index.ts';
import { testApp, type TestApp } from './helpers/app.ts';
import { freshPostgresDatabase } from './helpers/postgres.ts';
import { LOGOUT_EVENT, startRelyingParty, type Jwks, type RelyingPartyStandIn } from './helpers/stand-ins/relying-party.ts';

// Back-channel logout from the domain hook to a relying party, through the outbox worker and the
// outbound guard, in-process. The RP stand-in checks every token it gets (signature against the
// service's JWKS, typ, claims, replays); `drain()` runs the worker deterministically under the
// fixed clock, which the stand-in also judges iat/exp by.

const CLIENT = 'c_shop';
const jwksOf = (b: Built) => async (): Promise<Jwks> => (await b.app.inject({ url: '/api/v1/jwks' })).json<Jwks>();

let seq = 0;
/** Queues one logout through the domain hook; answers its outbox id and sid. */
async function queue(t: { services: Built['services']; clock: FixedClock }, uri: string): Promise<{ id: number; sid: string }> {
  const sid = `sid-${++seq}`;
  const id = await queueBackchannelLogout(t.services.store, { userId: 'u_owner', clientId: CLIENT, uri, sub: `pairwise-${seq}`, sid, now: t.clock.now() });
  return { id, sid };
}

async function message(store: Store, id: number): Promise<OutboxMessage> {
  const m = (await store.outbox.list({ kind: 'logout', limit: 1000 })).find((x) => x.id === id);
  assert.ok(m, `outbox message ${id}`);
  return m;
}

const forSid = (rp: RelyingPartyStandIn, sid: string) => rp.received.filter((r) => r.claims.sid === sid);

function deliveryPath(backend: 'sqlite' | 'postgres'): void {
  describe(`back-channel logout (${backend})`, () => {
    let t: TestApp;
    let rp: RelyingPartyStandIn;
    const drain = () => t.services.outbox.drain();
    before(async () => {
      t = await testApp({ backend, env: { OUTBOUND_ALLOW_LOOPBACK: 'true', OUTBOX_POLL_MS: '600000' } });
      rp = await startRelyingParty({ issuer: t.config.baseUrl, clientId: CLIENT, jwks: jwksOf(t), now: () => t.clock.now() });
    });
    after(async () => {
      await t.close();
      await rp.close();
    });

    it('queues without a token and delivers one valid logout token, once', async () => {
      const { id, sid } = await queue(t, rp.uri);
      const queued = await message(t.services.store, id);
      assert.deepEqual({ channel: queued.channel, kind: queued.kind, topic: queued.topic, deviceId: queued.deviceId }, { channel: 'backchannel', kind: 'logout', topic: null, deviceId: null });
      assert.deepEqual(queued.payload, { uri: rp.uri, client_id: CLIENT, sub: `pairwise-${seq}`, sid }, 'the stored payload holds no token');
      assert.equal(queued.expiresAt, t.clock.now() + BACKCHANNEL_LOGOUT_WINDOW_MS);

      await drain();
      assert.deepEqual(rp.rejections, []);
      const [got, ...more] = forSid(rp, sid);
      assert.equal(more.length, 0);
      assert.equal(got?.answered, 200);
      const { kid } = (await jwksOf(t)()).keys[0]!;
      assert.deepEqual(got.header, { alg: 'ES256', kid, typ: 'logout+jwt' });
      const iat = Math.floor(t.clock.now() / 1000);
      assert.deepEqual(Object.keys(got.claims).sort(), ['aud', 'events', 'exp', 'iat', 'iss', 'jti', 'sid', 'sub']);
      assert.deepEqual({ ...got.claims, jti: undefined }, { iss: t.config.baseUrl, aud: CLIENT, iat, exp: iat + 120, jti: undefined, sub: `pairwise-${seq}`, sid, events: { [LOGOUT_EVENT]: {} } });
      const sent = await message(t.services.store, id);
      assert.equal(sent.sentAt, t.clock.now());
      assert.equal(sent.attempts, 1);
      assert.equal(sent.lastError, null);

      t.clock.advance(60_000);
      await drain();
      assert.equal(forSid(rp, sid).length, 1, 'never sent again');
    });

    it('retries a 500 with backoff and delivers a fresh token at the retry', async () => {
      rp.behave({ status: 500, body: 'down for maintenance' });
      const { id, sid } = await queue(t, rp.uri);
      await drain();
      rp.behave(undefined);
      const waiting = await message(t.services.store, id);
      assert.equal(waiting.attempts, 1);
      assert.equal(waiting.sentAt, null);
      assert.equal(waiting.failedAt, null);
      assert.match(waiting.lastError ?? '', /answered 500: down for maintenance/);
      const delay = waiting.nextAttemptAt - t.clock.now();
      assert.ok(delay >= 4_000 && delay <= 6_000, `first backoff ${delay} ms`);

      t.clock.advance(delay - 1);
      await drain();
      assert.equal(forSid(rp, sid).length, 1, 'not before the backoff');
      t.clock.advance(1);
      await drain();
      const [first, second] = forSid(rp, sid);
      assert.equal(first?.answered, 500);
      assert.equal(second?.answered, 200);
      assert.notEqual(second.claims.jti, first.claims.jti, 'each try has its own jti');
      assert.equal(second.claims.iat, Math.floor(t.clock.now() / 1000), 'signed at the retry');
      const sent = await message(t.services.store, id);
      assert.equal(sent.attempts, 2);
      assert.equal(sent.sentAt, t.clock.now());
      assert.equal(sent.lastError, null);
      assert.deepEqual(rp.rejections, []);
    });

    it('gives up after 15 minutes of failures, each try a valid token and a longer wait', async () => {
      rp.behave({ status: 503, retryAfter: '1' });
      const start = t.clock.now();
      const { id, sid } = await queue(t, rp.uri);
      const tries: number[] = [];
      let m = await message(t.services.store, id);
      while (m.failedAt === null) {
        assert.ok(tries.length < 20, 'it ends');
        await drain();
        tries.push(t.clock.now());
        m = await message(t.services.store, id);
        if (m.failedAt === null) t.clock.set(m.nextAttemptAt);
      }
      rp.behave(undefined);
      assert.ok(m.failedAt - start < BACKCHANNEL_LOGOUT_WINDOW_MS, 'given up within the window');
      assert.match(m.lastError ?? '', new RegExp(`^gave up after ${tries.length} attempts: .*answered 503`));
      assert.equal(m.attempts, tries.length);
      assert.ok(tries.length >= 6, `${tries.length} tries in 15 minutes`);
      const waits = tries.slice(1).map((at, i) => at - tries[i]!);
      assert.ok(waits.every((w, i) => i === 0 || w > waits[i - 1]!), `backoff grows: ${waits.join(', ')}`);
      const seen = forSid(rp, sid);
      assert.equal(seen.length, tries.length, 'each try reached the RP');
      assert.equal(new Set(seen.map((s) => s.claims.jti)).size, seen.length);

      t.clock.advance(BACKCHANNEL_LOGOUT_WINDOW_MS);
      await drain();
      assert.equal(forSid(rp, sid).length, tries.length, 'no try after giving up');
    });

    it('a 400 from the RP is recorded and not retried', async () => {
      rp.behave({ status: 400, body: '{"error":"invalid_request","error_description":"unknown sid"}' });
      const { id, sid } = await queue(t, rp.uri);
      await drain();
      rp.behave(undefined);
      const m = await message(t.services.store, id);
      assert.equal(m.failedAt, t.clock.now());
      assert.equal(m.attempts, 1);
      assert.match(m.lastError ?? '', /answered 400: .*unknown sid/);
      t.clock.advance(20 * 60_000);
      await drain();
      assert.equal(forSid(rp, sid).length, 1);
    });

    it('an RP that does not answer is tried again later (the guard\'s deadline)', async () => {
      rp.behave({ hang: true });
      const { id, sid } = await queue(t, rp.uri);
      await drain();
      rp.behave(undefined);
      const m = await message(t.services.store, id);
      assert.equal(m.failedAt, null);
      assert.match(m.lastError ?? '', /not completed: timeout/);
      t.clock.set(m.nextAttemptAt);
      await drain();
      assert.deepEqual(forSid(rp, sid).map((r) => r.answered), ['hang', 200]);
      assert.notEqual((await message(t.services.store, id)).sentAt, null);
    });
  });
}

deliveryPath('sqlite');
deliveryPath('postgres');

describe('the relying-party stand-in refuses what the specification forbids', () => {
  let t: TestApp;
  let rp: RelyingPartyStandIn;
  before(async () => {
    t = await testApp({ env: { OUTBOX_POLL_MS: '600000' } });
    rp = await startRelyingParty({ issuer: t.config.baseUrl, clientId: CLIENT, jwks: jwksOf(t), now: () => t.clock.now() });
  });
  after(async () => {
    await t.close();
    await rp.close();
  });

  const post = (body: string, type = 'application/x-www-form-urlencoded') => fetch(rp.uri, { method: 'POST', headers: { 'content-type': type }, body });
  const form = (token: string) => new URLSearchParams({ logout_token: token }).toString();
  const claims = (extra: Record<string, unknown> = {}) => {
    const iat = Math.floor(t.clock.now() / 1000);
    return { iss: t.config.baseUrl, aud: CLIENT, iat, exp: iat + 120, jti: `j-${++seq}`, sub: 's', sid: 'x', events: { [LOGOUT_EVENT]: {} }, ...extra };
  };

  it('accepts a good token once, then refuses it replayed and every broken variant', async () => {
    const good = await t.services.keys.sign(claims(), 'logout+jwt');
    assert.equal((await post(form(good))).status, 200);
    const bad: [string, Promise<Response>][] = [
      ['jti replayed', post(form(good))],
      ['not a form', post(JSON.stringify({ logout_token: good }), 'application/json')],
      ['not one logout_token', post(`${form(good)}&logout_token=x`)],
      ['not logout+jwt', t.services.keys.sign(claims(), 'JWT').then((tok) => post(form(tok)))],
      ['nonce', t.services.keys.sign(claims({ nonce: 'n' }), 'logout+jwt').then((tok) => post(form(tok)))],
      ['lifetime', t.services.keys.sign(claims({ exp: Math.floor(t.clock.now() / 1000) + 600 }), 'logout+jwt').then((tok) => post(form(tok)))],
      ['events', t.services.keys.sign(claims({ events: {} }), 'logout+jwt').then((tok) => post(form(tok)))],
      ['sid missing', t.services.keys.sign(claims({ sid: undefined }), 'logout+jwt').then((tok) => post(form(tok)))],
      ['aud is', t.services.keys.sign(claims({ aud: 'c_other' }), 'logout+jwt').then((tok) => post(form(tok)))],
      ['signature', post(form(`${good.slice(0, -4)}AAAA`))],
    ];
    for (const [reason, response] of bad) {
      const res = await response;
      assert.equal(res.status, 400, reason);
      assert.equal(((await res.json()) as { error: string }).error, 'invalid_request');
    }
    assert.equal(rp.accepted().length, 1);
    for (const [reason] of bad) assert.ok(rp.rejections.some((r) => r.reason.includes(reason)), `refused for ${reason}: ${JSON.stringify(rp.rejections)}`);
  });

  it('without OUTBOUND_ALLOW_LOOPBACK the guard refuses private and loopback addresses, for good', async () => {
    const reached = rp.requests;
    const privateIp = await queue(t, 'https://10.1.2.3/backchannel-logout');
    const loopback = await queue(t, rp.uri);
    await t.services.outbox.drain();
    const p = await message(t.services.store, privateIp.id);
    assert.equal(p.failedAt, t.clock.now());
    assert.equal(p.attempts, 1);
    assert.match(p.lastError ?? '', /^back-channel logout to https:\/\/10\.1\.2\.3 not completed: address: .*public address.*private/);
    const l = await message(t.services.store, loopback.id);
    assert.equal(l.failedAt, t.clock.now());
    assert.match(l.lastError ?? '', /not completed: scheme: .*https: URL/);
    assert.equal(rp.requests, reached, 'nothing reached the RP');
  });
});

describe('two apps over one PostgreSQL store', () => {
  const clock = new FixedClock();
  const dirs: string[] = [];
  const stores: Store[] = [];
  const apps: Built[] = [];
  let drop: () => Promise<void>;
  let rp: RelyingPartyStandIn;
  before(async () => {
    const db = await freshPostgresDatabase();
    drop = db.drop;
    // One after the other: the first creates the signing key, the second finds it.
    for (let i = 0; i < 2; i++) {
      const dir = mkdtempSync(join(tmpdir(), 'mandate-bcl-'));
      dirs.push(dir);
      const store = await openPostgresStore(db.url);
      stores.push(store);
      const config = parseConfig({ BASE_URL: 'http://localhost:8080', DATA_DIR: dir, LOG_LEVEL: 'silent', OUTBOUND_ALLOW_LOOPBACK: 'true', OUTBOX_POLL_MS: '600000' });
      const built = await buildApp({ config, store, clock, logger: false });
      await built.app.ready();
      apps.push(built);
    }
    rp = await startRelyingParty({ issuer: 'http://localhost:8080', clientId: CLIENT, jwks: jwksOf(apps[0]!), now: () => clock.now() });
  });
  after(async () => {
    for (const a of apps) await a.app.close();
    for (const s of stores) await s.close();
    await drop?.();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    await rp.close();
  });

  it('each logout reaches the RP once, whichever node sends it', async () => {
    const [a, b] = apps as [Built, Built];
    const queued = [];
    for (let i = 0; i < 30; i++) queued.push(await queue({ services: (i % 2 ? a : b).services, clock }, rp.uri));
    // Both nodes drain at once: each claims from the shared table (SKIP LOCKED), never the same row.
    const handled = await Promise.all([a.services.outbox.drain(), b.services.outbox.drain()]);
    assert.equal(handled.reduce((x, y) => x + y, 0), 30, 'each message claimed once');
    assert.deepEqual(rp.rejections, [], 'tokens signed on either node verify with the published keys');
    for (const { sid } of queued) assert.equal(forSid(rp, sid).length, 1, `${sid} sent once`);
    for (const { id } of queued) assert.notEqual((await message(stores[0]!, id)).sentAt, null);
  });
});
