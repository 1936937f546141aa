import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { decodeProtectedHeader } from 'jose';
import { buildApp } from '../src/app.ts';
import { parseConfig } from '../src/config/config.ts';
import { FixedClock } from '../src/clock.ts';
import { openPostgresStore } from '../src/store/postgres/open.ts';
import { expectStatus, json, signUp, type TestApp, testApp } from './helpers/app.ts';
import { createAgent, createGrant, type TestAgent } from './helpers/agents.ts';
import { verifyEmail } from './helpers/email-links.ts';
import { getPass, mintStepup, proof, stepupVerify, verify, verifyBody } from './helpers/passes.ts';
import { freshPostgresDatabase } from './helpers/postgres.ts';

// "Revoke now" key rotation (issue 14, item 7): POST /api/admin/keys/rotate {revoke_now: true} drops
// every older key at once, from the published key set and from verification, on every node.

const ADMIN = 'keys-admin@example.com';
const GRACE_SEC = 3600;

interface Rotated {
  kid: string;
  retired: string[];
  revoked: string[];
  grace_seconds: number;
  consequences: string;
}

const rotate = (t: Pick<TestApp, 'app'>, auth: Record<string, string>, payload?: unknown): Promise<LightMyRequestResponse> =>
  t.app.inject({ method: 'POST', url: '/api/admin/keys/rotate', headers: auth, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
const publishedKids = async (t: Pick<TestApp, 'app'>): Promise<string[]> =>
  json<{ keys: { kid: string }[] }>(await t.app.inject({ url: '/api/v1/jwks' })).keys.map((k) => k.kid).sort();
const kidOf = (token: string): string => String(decodeProtectedHeader(token).kid);

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`signing key rotation with revoke_now (${backend})`, () => {
    let t: TestApp;
    let admin: Awaited<ReturnType<typeof signUp>>;
    let agent: TestAgent;
    before(async () => {
      t = await testApp({ backend, env: { ADMIN_EMAILS: ADMIN, KEY_ROTATION_GRACE_SECONDS: String(GRACE_SEC) } });
      admin = await signUp(t.app, ADMIN);
      await verifyEmail(t, admin); // an ADMIN_EMAILS address is admin once verified (decisions §25)
      agent = await createAgent(t);
      await createGrant(t, agent);
    });
    after(() => t.close());

    const passVerifies = async (pass: string): Promise<boolean> => (await verify(t, await verifyBody(t, agent, pass))).valid;

    it('is for admins only: 401 without a session, 403 for an owner; the keys stay as they were', async () => {
      const before = await publishedKids(t);
      expectStatus(await rotate(t, {}, { revoke_now: true }), 401);
      expectStatus(await rotate(t, (await signUp(t.app)).auth, { revoke_now: true }), 403);
      assert.deepEqual(await publishedKids(t), before);
    });

    it('refuses a revoke_now that is not a boolean (422), rather than guessing', async () => {
      const res = await rotate(t, admin.auth, { revoke_now: 'yes' });
      expectStatus(res, 422);
      assert.deepEqual(json<{ detail: { loc: unknown[] }[] }>(res).detail[0]?.loc, ['body', 'revoke_now']);
    });

    it('a normal rotation (no body, or {}) keeps passes signed before valid for the grace window', async () => {
      const pass = (await getPass(t, agent)).access_token;
      const oldKid = kidOf(pass);
      const res = await rotate(t, admin.auth);
      expectStatus(res, 200);
      const r = json<Rotated>(res);
      assert.deepEqual(r.retired, [oldKid]);
      assert.deepEqual(r.revoked, []);
      assert.equal(r.grace_seconds, GRACE_SEC);
      assert.match(r.consequences, /Nothing breaks/);
      assert.deepEqual(await publishedKids(t), [oldKid, r.kid].sort());
      assert.equal(await passVerifies(pass), true, 'a pass signed with the retired key still verifies');
      const again = json<Rotated>(await rotate(t, admin.auth, {}));
      assert.deepEqual(again.revoked, []);
      assert.equal(await passVerifies(pass), true);
    });

    it('revoke_now drops every older key at once: passes and step-up tokens signed with them are refused, new ones verify', async () => {
      const oldPass = (await getPass(t, agent)).access_token;
      const oldStepup = await mintStepup(t, agent);
      assert.equal(await passVerifies(oldPass), true);
      const before = await publishedKids(t);
      assert.ok(before.length >= 2, 'keys retired by the rotations above are still published (grace window)');

      const res = await rotate(t, admin.auth, { revoke_now: true });
      expectStatus(res, 200);
      const r = json<Rotated>(res);
      assert.deepEqual(r.retired, [kidOf(oldPass)]);
      assert.deepEqual([...r.revoked].sort(), before, 'the current key and the ones still in their grace window');
      assert.equal(r.grace_seconds, 0);
      assert.match(r.consequences, /new pass from \/api\/v1\/token/);
      assert.match(r.consequences, /Local-mode sites/);
      assert.match(r.consequences, /\/api\/v1\/jwks/);

      assert.deepEqual(await publishedKids(t), [r.kid]);
      const refused = await verify(t, await verifyBody(t, agent, oldPass));
      assert.equal(refused.valid, false);
      assert.equal(await t.services.keys.verificationKey(kidOf(oldPass)), undefined);
      const stepup = await stepupVerify(t, { ...(await verifyBody(t, agent, oldPass)), stepup_token: oldStepup, action: 'checkout' });
      assert.equal(stepup.valid, false);

      // The agent gets a new pass (its refresh token and grant are untouched) and it verifies.
      const fresh = (await getPass(t, agent)).access_token;
      assert.equal(kidOf(fresh), r.kid);
      assert.equal(await passVerifies(fresh), true);
      // Still refused later: the key is gone, not merely out of its grace window.
      t.clock.advance(5_000);
      assert.equal((await verify(t, { access_token: oldPass, dpop: await proof(t, agent, oldPass), method: 'GET', url: 'https://shop.example/orders' })).valid, false);
    });
  });
}

describe('revoke_now reaches every node (two apps over one PostgreSQL database)', () => {
  const clock = new FixedClock();
  let db: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  const nodes: TestApp[] = [];

  before(async () => {
    db = await freshPostgresDatabase();
    for (let i = 0; i < 2; i++) {
      const dir = mkdtempSync(join(tmpdir(), 'mandate-key-revoke-'));
      const config = parseConfig({ BASE_URL: 'http://localhost:8080', DATA_DIR: dir, LOG_LEVEL: 'silent', DATABASE_URL: db.url, ADMIN_EMAILS: ADMIN, KEY_ROTATION_GRACE_SECONDS: String(GRACE_SEC) });
      const store = await openPostgresStore(db.url);
      const built = await buildApp({ config, store, clock, logger: false });
      await built.app.ready();
      nodes.push({ ...built, clock, config, close: async () => {
        await built.app.close();
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      } });
    }
  });
  after(async () => {
    for (const n of nodes) await n.close();
    await db.drop();
  });

  it('node A revokes; within a second node B no longer publishes or accepts the old key, and signs with the new one', async () => {
    const [a, b] = nodes as [TestApp, TestApp];
    const admin = await signUp(a.app, ADMIN);
    await verifyEmail(a, admin);
    const agent = await createAgent(a);
    await createGrant(a, agent);
    const oldPass = (await getPass(b, agent)).access_token;
    assert.equal((await verify(b, await verifyBody(b, agent, oldPass))).valid, true, 'B knows the old key');
    assert.deepEqual(await publishedKids(b), [kidOf(oldPass)]);

    const r = json<Rotated>(await rotate(a, admin.auth, { revoke_now: true }));
    assert.deepEqual(r.revoked, [kidOf(oldPass)]);
    assert.equal((await verify(a, await verifyBody(a, agent, oldPass))).valid, false, 'A refuses at once');

    clock.advance(1_000);
    assert.deepEqual(await publishedKids(b), [r.kid]);
    assert.equal((await verify(b, await verifyBody(b, agent, oldPass))).valid, false, 'B refuses');
    const fromB = (await getPass(b, agent)).access_token;
    assert.equal(kidOf(fromB), r.kid, 'B signs with the new key');
    assert.equal((await verify(a, await verifyBody(a, agent, fromB))).valid, true);
  });
});
