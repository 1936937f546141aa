import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPair, SignJWT, decodeJwt, decodeProtectedHeader } from 'jose';
import { STEPUP_TYP } from '@mandate/protocol';
import { testApp, type TestApp } from './helpers/app.ts';
import { createAgent, createGrant, type TestAgent } from './helpers/agents.ts';
import { getPass, mintStepup, stepupVerify, verify, verifyBody } from './helpers/passes.ts';

describe('POST /api/v1/stepup/verify (local mode)', () => {
  let t: TestApp;
  let agent: TestAgent;
  before(async () => {
    t = await testApp();
    agent = await createAgent(t);
    await createGrant(t, agent);
  });
  after(() => t.close());

  const expectError = async (payload: unknown, code: string) => {
    const r = await stepupVerify(t, payload);
    assert.equal(r.valid, false, `expected ${code}, got valid`);
    assert.equal(r.error, code, r.error_description);
    assert.equal(typeof r.error_description, 'string');
  };

  it('uses a step-up token up: the first call succeeds, the second gets stepup_used_or_expired', async () => {
    const st = await mintStepup(t, agent, { act: ['checkout'] });
    const r = await stepupVerify(t, { stepup_token: st, site: 'shop.example', action: 'checkout' });
    assert.deepEqual(r, { valid: true, agent_id: agent.id, user_id: agent.owner.user.id, site: 'shop.example', actions: ['checkout'] });
    await expectError({ stepup_token: st, site: 'shop.example', action: 'checkout' }, 'stepup_used_or_expired');
    const trail = await t.services.store.activity.list(agent.owner.user.id, { before: 0, limit: 5, action: 'stepup.used' });
    assert.equal(trail.length, 1);
  });

  it('shares single use with /api/v1/verify', async () => {
    const pass = (await getPass(t, agent)).access_token;
    const st = await mintStepup(t, agent);
    assert.equal((await verify(t, await verifyBody(t, agent, pass, { stepup_token: st }))).stepup, true);
    await expectError({ stepup_token: st, site: 'shop.example', action: 'checkout' }, 'stepup_used_or_expired');
    const st2 = await mintStepup(t, agent);
    assert.equal((await stepupVerify(t, { stepup_token: st2, site: 'shop.example', action: 'checkout' })).valid, true);
    const r = await verify(t, await verifyBody(t, agent, pass, { stepup_token: st2 }));
    assert.equal(r.error, 'stepup_used_or_expired');
  });

  it('lives 60 s: valid at 59 s, stepup_used_or_expired at 61 s', async () => {
    const a = await mintStepup(t, agent);
    const b = await mintStepup(t, agent);
    t.clock.advance(59_000);
    assert.equal((await stepupVerify(t, { stepup_token: a, site: 'shop.example', action: 'checkout' })).valid, true);
    t.clock.advance(2_000);
    await expectError({ stepup_token: b, site: 'shop.example', action: 'checkout' }, 'stepup_used_or_expired');
  });

  it('checks site and action without using the token up', async () => {
    const st = await mintStepup(t, agent, { act: ['checkout'] });
    await expectError({ stepup_token: st, site: 'other.example', action: 'checkout' }, 'stepup_wrong_site');
    await expectError({ stepup_token: st, site: 'shop.example', action: 'Checkout' }, 'stepup_wrong_action');
    assert.equal((await stepupVerify(t, { stepup_token: st, site: 'shop.example', action: 'checkout' })).valid, true);
  });

  it('with agent_id and user_id, a token of another agent or user is stepup_invalid and is not used up', async () => {
    const other = await createAgent(t);
    await createGrant(t, other);
    const st = await mintStepup(t, agent);
    const base = { stepup_token: st, site: 'shop.example', action: 'checkout' };
    const used = async () => (await t.services.store.activity.list(agent.owner.user.id, { before: 0, limit: 200, action: 'stepup.used' })).length;
    const usedBefore = await used();
    await expectError({ ...base, agent_id: other.id, user_id: agent.owner.user.id }, 'stepup_invalid');
    await expectError({ ...base, agent_id: agent.id, user_id: other.owner.user.id }, 'stepup_invalid');
    await expectError({ ...base, agent_id: other.id }, 'stepup_invalid');
    await expectError({ ...base, user_id: other.owner.user.id }, 'stepup_invalid');
    await expectError({ ...base, agent_id: '' }, 'invalid_request');
    assert.equal(await used(), usedBefore, 'none of that used the token');
    const r = await stepupVerify(t, { ...base, agent_id: agent.id, user_id: agent.owner.user.id });
    assert.deepEqual(r, { valid: true, agent_id: agent.id, user_id: agent.owner.user.id, site: 'shop.example', actions: ['checkout'] });
  });

  it('refuses what is not a step-up token of this service with stepup_invalid', async () => {
    const pass = (await getPass(t, agent)).access_token;
    const st = await mintStepup(t, agent);
    const foreign = await generateKeyPair('ES256');
    const forged = await new SignJWT({ ...decodeJwt(st) }).setProtectedHeader({ alg: 'ES256', typ: STEPUP_TYP, kid: decodeProtectedHeader(st).kid ?? '' }).sign(foreign.privateKey);
    const wrongType = await t.services.keys.sign({ ...decodeJwt(st), type: 'access' }, STEPUP_TYP);
    const otherIssuer = await t.services.keys.sign({ ...decodeJwt(st), iss: 'https://elsewhere.example' }, STEPUP_TYP);
    for (const token of [pass, forged, wrongType, otherIssuer, 'x.y.z']) await expectError({ stepup_token: token, site: 'shop.example', action: 'checkout' }, 'stepup_invalid');
  });

  it('refuses the step-up of a revoked agent (agent_revoked) or a revoked grant (grant_revoked)', async () => {
    const a = await createAgent(t);
    await createGrant(t, a);
    const st = await mintStepup(t, a);
    await t.app.inject({ method: 'POST', url: `/api/agents/${a.id}/flag`, headers: a.owner.auth, payload: { flag: 'revoked' } });
    await expectError({ stepup_token: st, site: 'shop.example', action: 'checkout' }, 'agent_revoked');

    const b = await createAgent(t);
    const grant = await createGrant(t, b);
    const stb = await mintStepup(t, b);
    await t.services.store.grants.revoke(grant.id, t.clock.now(), await t.services.store.counters.next('rev_seq'));
    await expectError({ stepup_token: stb, site: 'shop.example', action: 'checkout' }, 'grant_revoked');
  });

  it('answers 200 invalid_request to malformed bodies', async () => {
    const st = await mintStepup(t, agent);
    for (const b of [{}, { stepup_token: st }, { stepup_token: st, site: 'shop.example' }, { stepup_token: 1, site: 'shop.example', action: 'x' }, [], { stepup_token: st, site: '', action: 'checkout' }]) {
      await expectError(b, 'invalid_request');
    }
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/stepup/verify', payload: '{oops', headers: { 'content-type': 'application/json' } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().error, 'invalid_request');
    // None of that used the token.
    assert.equal((await stepupVerify(t, { stepup_token: st, site: 'shop.example', action: 'checkout' })).valid, true);
  });
});
