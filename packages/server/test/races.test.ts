import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { testApp, type TestApp } from './helpers/app.ts';
import { agentJwt, createAgent, createGrant, type TestAgent } from './helpers/agents.ts';
import { getPass, mintStepup, proof, type VerifyBody } from './helpers/passes.ts';

// Single use under contention (decisions §5, §8): of N simultaneous uses of one step-up token, one
// refresh token or one DPoP jti, exactly one succeeds and the others fail cleanly (never a 5xx).
// The requests really overlap on PostgreSQL (a pool of connections); SQLite serialises them in
// its single writer, which must give the same answer.

const N = 50;
const URL_ = 'https://shop.example/orders';

function tally(responses: LightMyRequestResponse[]) {
  for (const r of responses) assert.ok(r.statusCode < 500, `5xx: ${r.statusCode} ${r.body}`);
  return responses;
}

function verdicts(responses: LightMyRequestResponse[]) {
  tally(responses);
  for (const r of responses) assert.equal(r.statusCode, 200, r.body);
  const bodies = responses.map((r) => r.json() as VerifyBody);
  const errors = new Map<string, number>();
  for (const b of bodies) if (!b.valid) errors.set(b.error ?? '?', (errors.get(b.error ?? '?') ?? 0) + 1);
  return { ok: bodies.filter((b) => b.valid).length, errors };
}

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`races on ${backend}`, () => {
    let t: TestApp;
    let agent: TestAgent;
    before(async () => {
      t = await testApp({ backend });
      agent = await createAgent(t);
      await createGrant(t, agent);
    });
    after(() => t.close());

    const post = (url: string, payload: unknown) => t.app.inject({ method: 'POST', url, payload: payload as Record<string, unknown> });

    it(`${N} uses of one step-up token via /api/v1/verify: exactly one`, async () => {
      const pass = (await getPass(t, agent)).access_token;
      const st = await mintStepup(t, agent);
      const bodies = await Promise.all(Array.from({ length: N }, async () => ({ access_token: pass, dpop: await proof(t, agent, pass), method: 'GET', url: URL_, stepup_token: st, action: 'checkout' })));
      const { ok, errors } = verdicts(await Promise.all(bodies.map((b) => post('/api/v1/verify', b))));
      assert.equal(ok, 1);
      assert.deepEqual([...errors], [['stepup_used_or_expired', N - 1]]);
    });

    it(`${N} uses of one step-up token via /api/v1/stepup/verify: exactly one`, async () => {
      const st = await mintStepup(t, agent);
      const body = { stepup_token: st, site: 'shop.example', action: 'checkout' };
      const { ok, errors } = verdicts(await Promise.all(Array.from({ length: N }, () => post('/api/v1/stepup/verify', body))));
      assert.equal(ok, 1);
      assert.deepEqual([...errors], [['stepup_used_or_expired', N - 1]]);
    });

    it(`${N} uses of one step-up token split over both endpoints: exactly one`, async () => {
      const pass = (await getPass(t, agent)).access_token;
      const st = await mintStepup(t, agent);
      const calls = await Promise.all(Array.from({ length: N }, async (_, i) =>
        i % 2 === 0
          ? { url: '/api/v1/verify', body: { access_token: pass, dpop: await proof(t, agent, pass), method: 'GET', url: URL_, stepup_token: st } }
          : { url: '/api/v1/stepup/verify', body: { stepup_token: st, site: 'shop.example', action: 'checkout' } }));
      const { ok, errors } = verdicts(await Promise.all(calls.map((c) => post(c.url, c.body))));
      assert.equal(ok, 1);
      assert.deepEqual([...errors], [['stepup_used_or_expired', N - 1]]);
    });

    it(`${N} uses of one DPoP proof (one jti): exactly one`, async () => {
      const pass = (await getPass(t, agent)).access_token;
      const body = { access_token: pass, dpop: await proof(t, agent, pass), method: 'GET', url: URL_ };
      const { ok, errors } = verdicts(await Promise.all(Array.from({ length: N }, () => post('/api/v1/verify', body))));
      assert.equal(ok, 1);
      assert.deepEqual([...errors], [['dpop_replay', N - 1]]);
    });

    it(`${N} uses of one refresh token: exactly one new pass, the rest 401`, async () => {
      const a = await createAgent(t);
      const grant = await createGrant(t, a);
      const first = await getPass(t, a);
      const jwt = await agentJwt(t, a);
      const responses = tally(await Promise.all(Array.from({ length: N }, () =>
        post('/api/v1/token', { agent_id: a.id, site: 'shop.example', agent_jwt: jwt, refresh_token: first.refresh_token }))));
      const winners = responses.filter((r) => r.statusCode === 200);
      assert.equal(winners.length, 1);
      for (const r of responses.filter((x) => x.statusCode !== 200)) {
        assert.equal(r.statusCode, 401, r.body);
        assert.equal(r.json().detail, 'refresh token already used or invalid');
      }
      assert.equal((await t.services.store.grants.byId(grant.id))?.passesIssued, 2);
      // The audit trail records exactly the passes issued: the first one and the one winner.
      const issued = await t.services.store.activity.list(a.owner.user.id, { before: 0, limit: 100, action: 'pass.issued', agentId: a.id });
      assert.equal(issued.length, 2);
      // The winner's refresh token is the one current token.
      const next = await post('/api/v1/token', { agent_id: a.id, site: 'shop.example', agent_jwt: jwt, refresh_token: winners[0]?.json().refresh_token });
      assert.equal(next.statusCode, 200);
    });

    it(`${N} calls for a grant with one use left: exactly one pass, the rest 403`, async () => {
      const a = await createAgent(t);
      await createGrant(t, a, { usesLeft: 1 });
      const jwt = await agentJwt(t, a);
      const responses = tally(await Promise.all(Array.from({ length: N }, () => post('/api/v1/token', { agent_id: a.id, site: 'shop.example', agent_jwt: jwt }))));
      assert.equal(responses.filter((r) => r.statusCode === 200).length, 1);
      for (const r of responses.filter((x) => x.statusCode !== 200)) {
        assert.equal(r.statusCode, 403, r.body);
        assert.match(r.json().detail, /no uses left/);
      }
    });
  });
}
