import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { randomBytes } from 'node:crypto';
import { REVOCATION_TYP, signPass, signServiceToken, signStepupToken } from '@mandate/protocol';
import { MemoryReplayCache, createVerifier, type ReplayCache, type Verifier, type VerifierOptions, type VerifyResult } from '../src/index.ts';
import {
  type ServiceKey,
  type Stub,
  type StubAgent,
  jwksOf,
  revocationClaims,
  serviceKey,
  snapshotAnswer,
  startStub,
  stubAgent,
  stubRequest,
} from './helpers/stub-service.ts';

// Local mode against a stub of Mandate's key and revocation endpoints, on a fake clock.

const SITE = 'shop.example';
const BASE = 'https://shop.example';
const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);

const outcome = (r: VerifyResult) => (r.ok ? 'ok' : `${r.status} ${r.error}`);

describe('local mode', () => {
  let stub: Stub;
  let k1: ServiceKey;
  let nowMs: number;
  let errors: Error[];
  let verifiers: Verifier[];
  const nowSec = () => Math.floor(nowMs / 1000);

  beforeEach(async () => {
    stub = await startStub();
    k1 = await serviceKey('k1');
    nowMs = T0;
    errors = [];
    verifiers = [];
    stub.routes.set('/api/v1/jwks', jwksOf(k1));
    stub.routes.set('/api/v1/revocation', await snapshotAnswer(k1, revocationClaims(stub.url, nowSec(), 1)));
  });
  afterEach(async () => {
    for (const v of verifiers) v.close();
    await stub.close();
  });

  function verifier(over: Partial<VerifierOptions> = {}): Verifier {
    const v = createVerifier({ mode: 'local', serviceUrl: stub.url, site: SITE, publicBaseUrl: BASE, now: () => nowMs, onError: (e) => errors.push(e), ...over });
    verifiers.push(v);
    return v;
  }
  const request = (key: ServiceKey, agent: StubAgent, revSeq = 0) => stubRequest(key, agent, { issuer: stub.url, site: SITE, base: BASE, nowSec: nowSec(), revSeq });
  const serveSnapshot = async (iat: number, revSeq: number, over = {}) =>
    stub.routes.set('/api/v1/revocation', await snapshotAnswer(k1, revocationClaims(stub.url, iat, revSeq, over)));

  describe('keys', () => {
    it('an unknown kid fetches the keys again, at most once per jwksMinRefreshSec (start-up fetch not counted); then a rotated key verifies', async () => {
      const v = verifier({ jwksMinRefreshSec: 30 });
      await v.start();
      assert.equal(stub.count('/api/v1/jwks'), 1);
      const k2 = await serviceKey('k2');
      const agent = await stubAgent();

      // Right after start: the start-up fetch does not use up the bound, so a rotation just after
      // start is looked up at once.
      assert.equal(outcome(await v.verify(await request(k2, agent))), '401 invalid_token');
      assert.equal(stub.count('/api/v1/jwks'), 2, 'an unknown kid right after start: one fetch');
      const many = await Promise.all(Array.from({ length: 10 }, async () => v.verify(await request(k2, agent))));
      assert.deepEqual(new Set(many.map(outcome)), new Set(['401 invalid_token']));
      for (let i = 0; i < 5; i++) assert.equal(outcome(await v.verify(await request(k2, agent))), '401 invalid_token');
      assert.equal(stub.count('/api/v1/jwks'), 2, 'bounded: no fetch per request within 30 s');

      nowMs += 30_000;
      const burst = await Promise.all(Array.from({ length: 10 }, async () => v.verify(await request(k2, agent))));
      assert.deepEqual(new Set(burst.map(outcome)), new Set(['401 invalid_token']));
      assert.equal(stub.count('/api/v1/jwks'), 3, 'ten unknown kids at once: one fetch');

      stub.routes.set('/api/v1/jwks', jwksOf(k1, k2)); // Mandate rotated to k2, k1 in its grace window
      nowMs += 29_000;
      assert.equal(outcome(await v.verify(await request(k2, agent))), '401 invalid_token', 'still within the bound');
      nowMs += 1_000;
      assert.equal(outcome(await v.verify(await request(k2, agent))), 'ok');
      assert.equal(outcome(await v.verify(await request(k1, agent))), 'ok', 'the old key still verifies');
      assert.equal(stub.count('/api/v1/jwks'), 4);
    });

    it('without keys (Mandate down at start) requests get 503, and verify once it is back', async () => {
      stub.routes.set('/api/v1/jwks', { status: 503, body: { detail: 'service unavailable' } });
      const v = verifier();
      await assert.rejects(v.start(), /jwks answered 503/);
      const agent = await stubAgent();
      assert.equal(outcome(await v.verify(await request(k1, agent))), '503 service_unavailable');
      assert.equal(v.status().ready, false);

      stub.routes.set('/api/v1/jwks', jwksOf(k1));
      await v.refresh();
      assert.equal(outcome(await v.verify(await request(k1, agent))), 'ok');
      assert.equal(v.status().ready, true);
      assert.ok(errors.some((e) => /keys are not loaded yet/.test(e.message)), errors.join());
    });

    it('verify starts a verifier that was not started', async () => {
      const v = verifier();
      assert.equal(outcome(await v.verify(await request(k1, await stubAgent()))), 'ok');
      assert.equal(stub.count('/api/v1/jwks'), 1);
    });
  });

  describe('revocation list', () => {
    it('refuses a pass whose agent or grant is listed at or after the pass rev_seq', async () => {
      const blocked = await stubAgent();
      const cut = await stubAgent();
      await serveSnapshot(nowSec(), 7, {
        revoked_agents: [{ id: blocked.id, flag: 'revoked', rev_seq: 5 }],
        revoked_grants: [{ agent: cut.id, site: SITE, rev_seq: 7 }],
      });
      const v = verifier();
      await v.start();
      assert.equal(outcome(await v.verify(await request(k1, blocked, 5))), '401 agent_revoked');
      assert.equal(outcome(await v.verify(await request(k1, blocked, 6))), 'ok', 'minted after the unblock');
      assert.equal(outcome(await v.verify(await request(k1, cut, 7))), '401 grant_revoked');
    });

    it('rev_seq never goes backwards: an older snapshot is ignored', async () => {
      const agent = await stubAgent();
      await serveSnapshot(nowSec(), 5, { revoked_agents: [{ id: agent.id, flag: 'revoked', rev_seq: 5 }] });
      const v = verifier();
      await v.start();
      assert.equal(outcome(await v.verify(await request(k1, agent, 3))), '401 agent_revoked');

      nowMs += 60_000;
      await serveSnapshot(nowSec(), 3); // an old state, freshly signed (a replay, or a lagging node)
      await v.refresh();
      assert.equal(v.status().revSeq, 5);
      assert.equal(outcome(await v.verify(await request(k1, agent, 3))), '401 agent_revoked');
      assert.ok(errors.some((e) => /older than the one held was ignored/.test(e.message)));

      await serveSnapshot(nowSec(), 6);
      await v.refresh();
      assert.equal(v.status().revSeq, 6);
      assert.equal(outcome(await v.verify(await request(k1, agent, 3))), 'ok');
    });

    it('forged, wrongly typed or foreign snapshots are ignored and the held one ages until max_stale', async () => {
      const agent = await stubAgent();
      const v = verifier({ revTtlSec: 60 }); // max_stale 300 s
      await v.start();
      const held = revocationClaims(stub.url, nowSec(), 2);
      const attacker = await serviceKey('k1'); // same kid, another key
      const bad = [
        ['a snapshot signed by another key', await snapshotAnswer(attacker, { ...held, iat: nowSec() + 60 })],
        ['a pass in the signature field', { status: 200, body: { signature: await signPass(k1.privateKey, 'k1', { iss: stub.url, sub: agent.id, aud: SITE, user: 'u_x', scope: [], cnf: { dpop: agent.jkt, jkt: agent.jkt }, type: 'access', iat: nowSec(), exp: nowSec() + 600, jti: 'j'.repeat(16), grant: 'gr_x', rev_seq: 9 }) } }],
        ['typ revocation+jwt with type access', { status: 200, body: { signature: await signServiceToken(k1.privateKey, { kid: 'k1', typ: REVOCATION_TYP }, { ...held, type: 'access', rev_seq: 9 }) } }],
        ['another issuer', await snapshotAnswer(k1, { ...held, iss: 'https://evil.example', rev_seq: 9 })],
        ['no signature', { status: 200, body: { rev_seq: 99, revoked_agents: [], revoked_grants: [] } }],
      ] as const;
      for (const [what, answer] of bad) {
        nowMs += 55_000;
        stub.routes.set('/api/v1/revocation', answer);
        await assert.rejects(v.refresh(), /snapshot ignored/, what);
        assert.equal(v.status().revSeq, 1, `${what}: the held snapshot stays`);
      }
      nowMs = T0 + 300_000; // the held one was signed exactly max_stale ago
      assert.equal(outcome(await v.verify(await request(k1, agent))), 'ok');
      nowMs += 1_000;
      assert.equal(outcome(await v.verify(await request(k1, agent))), '503 revocation_stale');
      assert.equal(v.status().ready, false);

      await serveSnapshot(nowSec(), 2);
      await v.refresh();
      assert.equal(outcome(await v.verify(await request(k1, agent))), 'ok');
    });

    it('an unreachable service is refused once max_stale has passed, and recovered from', async () => {
      const agent = await stubAgent();
      const v = verifier({ revTtlSec: 10, maxStaleSec: 40 });
      await v.start();
      stub.routes.set('/api/v1/revocation', { status: 500, body: { detail: 'boom' } });
      nowMs += 40_000;
      await assert.rejects(v.refresh(), /revocation answered 500/);
      assert.equal(outcome(await v.verify(await request(k1, agent))), 'ok');
      nowMs += 1_000;
      assert.equal(outcome(await v.verify(await request(k1, agent))), '503 revocation_stale');
      await serveSnapshot(nowSec(), 1);
      await v.refresh();
      assert.equal(outcome(await v.verify(await request(k1, agent))), 'ok');
    });

    it('a snapshot signed ahead of our clock ages from when it was accepted: a clock difference does not stretch max_stale', async () => {
      const agent = await stubAgent();
      await serveSnapshot(nowSec() + 30, 1); // the service's clock 30 s ahead (within the accepted skew)
      const v = verifier({ revTtlSec: 10, maxStaleSec: 40 });
      await v.start();
      stub.routes.set('/api/v1/revocation', { status: 500, body: { detail: 'boom' } });
      nowMs += 40_000;
      assert.equal(outcome(await v.verify(await request(k1, agent))), 'ok');
      nowMs += 1_000;
      assert.equal(outcome(await v.verify(await request(k1, agent))), '503 revocation_stale', 'refused at max_stale after acceptance, not 30 s later');
    });

    it('polls in the background every revTtlSec until closed', async () => {
      const v = verifier({ revTtlSec: 0.02 });
      await v.start();
      const polls = () => stub.count('/api/v1/revocation');
      const deadline = Date.now() + 20_000;
      while (polls() < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      assert.ok(polls() >= 4, `polled ${polls()} times`);
      v.close();
      await new Promise((r) => setTimeout(r, 50)); // a poll in flight may still land
      const settled = polls();
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(polls(), settled, 'no poll after close()');
    });

    it('without any snapshot requests get 503 revocation_stale', async () => {
      stub.routes.set('/api/v1/revocation', { status: 502, body: {} });
      const v = verifier();
      await assert.rejects(v.start());
      assert.equal(outcome(await v.verify(await request(k1, await stubAgent()))), '503 revocation_stale');
    });

    it('If-None-Match while the copy is young; dropped past half of max_stale; 304s never renew it', async () => {
      let etagServed = '';
      let iat = nowSec();
      stub.routes.set('/api/v1/revocation', () => ({ status: 500 }));
      const answer = async () => {
        const a = await snapshotAnswer(k1, revocationClaims(stub.url, iat, 1), `"v1"`);
        etagServed = '"v1"';
        return a;
      };
      let current = await answer();
      stub.routes.set('/api/v1/revocation', (req) => (req.headers['if-none-match'] === etagServed ? { status: 304 } : current));
      const v = verifier({ revTtlSec: 60 }); // max_stale 300, half 150
      await v.start();
      nowMs += 60_000;
      await v.refresh();
      nowMs += 89_000; // age 149
      await v.refresh();
      const revocationCalls = () => stub.calls.filter((c) => c.path === '/api/v1/revocation').map((c) => c.ifNoneMatch);
      assert.deepEqual(revocationCalls(), [undefined, '"v1"', '"v1"']);
      nowMs += 1_000; // age 150: ask for a freshly signed copy
      iat = nowSec();
      current = await answer();
      await v.refresh();
      assert.deepEqual(revocationCalls(), [undefined, '"v1"', '"v1"', undefined]);
      assert.equal(v.status().revocationAgeSec, 0);

      // A service (or man in the middle) answering 304 to everything cannot keep an old copy alive.
      stub.routes.set('/api/v1/revocation', { status: 304 });
      nowMs += 200_000;
      await assert.rejects(v.refresh(), /revocation answered 304/);
      nowMs += 101_000;
      assert.equal(outcome(await v.verify(await request(k1, await stubAgent()))), '503 revocation_stale');
    });
  });

  describe('step-ups', () => {
    const ACTION = 'buy 1 x Desk lamp for 19.90 EUR';
    async function stepupRequest(agent: StubAgent) {
      const req = await stubRequest(k1, agent, { issuer: stub.url, site: SITE, base: BASE, nowSec: nowSec(), path: '/checkout' });
      const stepup = await signStepupToken(k1.privateKey, 'k1', {
        iss: stub.url, sub: agent.id, aud: SITE, user: 'u_stubperson', act: [ACTION], type: 'stepup',
        jti: randomBytes(12).toString('base64url'), iat: nowSec(), exp: nowSec() + 60, cnf: { dpop: agent.jkt, jkt: agent.jkt },
      });
      return { ...req, headers: { ...req.headers, 'x-service-stepup': stepup } };
    }

    it('are always confirmed with Mandate, which is told the agent and person of the pass', async () => {
      const agent = await stubAgent();
      stub.routes.set('/api/v1/stepup/verify', () => ({ status: 200, body: { valid: true, agent_id: agent.id, user_id: 'u_stubperson', site: SITE, actions: [ACTION] } }));
      const v = verifier();
      const seen = stub.calls.length;
      const r = await v.verify(await stepupRequest(agent), { action: ACTION });
      assert.equal(outcome(r), 'ok');
      assert.equal(r.ok && r.stepup, true);
      const confirmations = stub.calls.slice(seen).filter((c) => c.path === '/api/v1/stepup/verify');
      assert.equal(confirmations.length, 1);
      const body = confirmations[0]?.body as Record<string, unknown>;
      assert.deepEqual({ ...body, stepup_token: '…' }, { stepup_token: '…', site: SITE, action: ACTION, agent_id: agent.id, user_id: 'u_stubperson' });
    });

    it('take the token from X-AuthYourAgent-Stepup as well (agents written for the original system)', async () => {
      const agent = await stubAgent();
      stub.routes.set('/api/v1/stepup/verify', () => ({ status: 200, body: { valid: true, agent_id: agent.id, user_id: 'u_stubperson', site: SITE, actions: [ACTION] } }));
      const ours = await stepupRequest(agent);
      const { 'x-service-stepup': token, ...rest } = ours.headers as Record<string, string>;
      const seen = stub.calls.length;
      const r = await verifier().verify({ ...ours, headers: { ...rest, 'X-AuthYourAgent-Stepup': token ?? '' } }, { action: ACTION });
      assert.equal(outcome(r), 'ok');
      assert.equal(r.ok && r.stepup, true);
      const confirmed = stub.calls.slice(seen).filter((c) => c.path === '/api/v1/stepup/verify');
      assert.equal((confirmed[0]?.body as Record<string, unknown> | undefined)?.['stepup_token'], token);
    });

    it('a refusal by Mandate is the answer; an unreachable or off-contract Mandate is a 503', async () => {
      const agent = await stubAgent();
      const v = verifier();
      stub.routes.set('/api/v1/stepup/verify', { status: 200, body: { valid: false, error: 'stepup_used_or_expired', error_description: 'used' } });
      assert.equal(outcome(await v.verify(await stepupRequest(agent), { action: ACTION })), '401 stepup_used_or_expired');
      stub.routes.set('/api/v1/stepup/verify', { status: 200, body: { valid: true, agent_id: 'ag_someone_else', user_id: 'u_stubperson', site: SITE, actions: [ACTION] } });
      assert.equal(outcome(await v.verify(await stepupRequest(agent), { action: ACTION })), '401 stepup_invalid');
      stub.routes.set('/api/v1/stepup/verify', { status: 503, body: { detail: 'service unavailable' } });
      assert.equal(outcome(await v.verify(await stepupRequest(agent), { action: ACTION })), '503 service_unavailable');
      stub.routes.set('/api/v1/stepup/verify', { status: 200, body: { valid: false, error: 'something_new' } });
      assert.equal(outcome(await v.verify(await stepupRequest(agent), { action: ACTION })), '503 service_unavailable');
      stub.routes.set('/api/v1/stepup/verify', { status: 200, body: { valid: 'yes' } });
      assert.equal(outcome(await v.verify(await stepupRequest(agent), { action: ACTION })), '503 service_unavailable');
    });
  });

  describe('DPoP replay cache', () => {
    it('MemoryReplayCache: once per jti until it expires (a full cache: replay-cache-abuse.test.ts)', async () => {
      const cache = new MemoryReplayCache({ maxEntries: 2, maxEntriesPerAgent: 2 });
      const from = (iat: number) => ({ agentId: 'ag_one', iat });
      assert.equal(await cache.consume('jti-aaaaaaaa', 1250, 1000, from(1000)), true);
      assert.equal(await cache.consume('jti-aaaaaaaa', 1250, 1001, from(1000)), false);
      assert.equal(await cache.consume('jti-bbbbbbbb', 1260, 1010, from(1010)), true);
      assert.equal(await cache.consume('jti-aaaaaaaa', 1500, 1250, from(1249)), true, 'expired: accepted again (the proof itself is stale by then)');
      assert.equal(cache.size, 2);
    });

    it('a replay is refused across verifiers sharing one cache (several processes)', async () => {
      const shared = new MemoryReplayCache();
      const a = verifier({ replayCache: shared });
      const b = verifier({ replayCache: shared });
      const req = await request(k1, await stubAgent());
      assert.equal(outcome(await a.verify(req)), 'ok');
      assert.equal(outcome(await b.verify(req)), '401 dpop_replay');
      assert.equal(outcome(await verifier().verify(req)), 'ok', 'a verifier with its own cache cannot know (hence: share one)');
    });

    it('a failing cache refuses with 503 instead of letting a replay through', async () => {
      const broken: ReplayCache = { consume: async () => { throw new Error('redis down'); } };
      assert.equal(outcome(await verifier({ replayCache: broken }).verify(await request(k1, await stubAgent()))), '503 service_unavailable');
      assert.ok(errors.some((e) => e.message === 'redis down'));
    });
  });
});
