import { describe, it, before, beforeEach, after } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt, decodeProtectedHeader, generateKeyPair, SignJWT } from 'jose';
import { createAgentJwt, PASS_TYP, REVOCATION_TYP, VERIFY_ERROR_CODES } from '@mandate/protocol';
import { seconds } from '../src/clock.ts';
import { testApp, type TestApp } from './helpers/app.ts';
import { createAgent, createGrant, type TestAgent } from './helpers/agents.ts';
import { getPass, mintStepup, proof, randomJti, rawProof, verify, verifyBody } from './helpers/passes.ts';

const URL_ = 'https://shop.example/orders';

describe('POST /api/v1/verify', () => {
  let t: TestApp;
  let agent: TestAgent;
  let pass: string;
  before(async () => {
    t = await testApp();
    agent = await createAgent(t, undefined, 'Shopper');
    await t.services.store.users.update(agent.owner.user.id, { displayName: 'Ada' });
    await createGrant(t, agent, { scopes: ['list', 'orders:read'], userInfo: ['user:name'] });
    pass = (await getPass(t, agent)).access_token;
  });
  after(() => t.close());

  const expectError = async (payload: unknown, code: string) => {
    const r = await verify(t, payload);
    assert.equal(r.valid, false, `expected ${code}, got valid`);
    assert.equal(r.error, code, r.error_description);
    assert.ok(VERIFY_ERROR_CODES.includes(r.error as (typeof VERIFY_ERROR_CODES)[number]));
    assert.equal(typeof r.error_description, 'string');
    return r;
  };

  it('accepts a pass with its proof and answers who and what', async () => {
    const r = await verify(t, await verifyBody(t, agent, pass));
    assert.deepEqual(r, {
      valid: true,
      agent_id: agent.id,
      agent_name: 'Shopper',
      user_id: agent.owner.user.id,
      site: 'shop.example',
      scopes: ['list', 'orders:read'],
      user_info: { 'user:name': 'Ada' },
      stepup: false,
    });
  });

  it('answers user_info {} when none was approved, and ignores `action` without a step-up token', async () => {
    const a = await createAgent(t);
    await createGrant(t, a);
    const p = (await getPass(t, a)).access_token;
    const r = await verify(t, await verifyBody(t, a, p, { action: 'checkout' }));
    assert.equal(r.valid, true);
    assert.deepEqual(r.user_info, {});
    assert.equal(r.stepup, false);
  });

  it('keeps a pass valid for 600 s (token_expired at 600 s)', async () => {
    const p = (await getPass(t, agent)).access_token;
    t.clock.advance(599_000);
    assert.equal((await verify(t, await verifyBody(t, agent, p))).valid, true);
    t.clock.advance(1_000);
    await expectError(await verifyBody(t, agent, p), 'token_expired');
  });

  it('accepts DPoP iat within 120 s either way, dpop_stale beyond', async () => {
    const p = (await getPass(t, agent)).access_token;
    const now = seconds(t.clock.now());
    for (const iat of [now - 120, now + 120]) {
      assert.equal((await verify(t, { access_token: p, dpop: await proof(t, agent, p, { iat }), method: 'GET', url: URL_ })).valid, true, `iat ${iat - now}`);
    }
    for (const iat of [now - 121, now + 121]) {
      await expectError({ access_token: p, dpop: await proof(t, agent, p, { iat }), method: 'GET', url: URL_ }, 'dpop_stale');
    }
  });

  it('accepts each DPoP jti once (dpop_replay), also in a new proof and minutes later', async () => {
    const p = (await getPass(t, agent)).access_token;
    const body = await verifyBody(t, agent, p);
    assert.equal((await verify(t, body)).valid, true);
    await expectError(body, 'dpop_replay');
    const jti = decodeJwt(body.dpop).jti as string;
    t.clock.advance(200_000);
    await expectError({ ...body, dpop: await proof(t, agent, p, { jti }) }, 'dpop_replay');
    // A proof refused for another reason does not use up its jti.
    const fresh = randomJti();
    await expectError({ ...body, dpop: await proof(t, agent, p, { jti: fresh, method: 'POST' }) }, 'dpop_method_mismatch');
    assert.equal((await verify(t, { ...body, dpop: await proof(t, agent, p, { jti: fresh }) })).valid, true);
    // Nor does a proof whose signature fails: its jti was spent while the signature was checked, and given back.
    const forgedJti = randomJti();
    const [header, payload] = (await proof(t, agent, p, { jti: forgedJti })).split('.');
    const otherSignature = (await proof(t, agent, p)).split('.')[2];
    const refused = await expectError({ ...body, dpop: `${header}.${payload}.${otherSignature}` }, 'invalid_dpop');
    assert.match(refused.error_description ?? "", /signature is invalid/);
    assert.equal((await verify(t, { ...body, dpop: await proof(t, agent, p, { jti: forgedJti }) })).valid, true);
  });

  it('compares htu and url after normalisation (case, default port, query, fragment)', async () => {
    const p = (await getPass(t, agent)).access_token;
    const ok = [
      { htu: 'https://shop.example/orders', url: 'HTTPS://Shop.EXAMPLE:443/orders?page=2#top' },
      { htu: 'HTTPS://SHOP.example:443/orders?x=1', url: 'https://shop.example/orders' },
      { htu: 'https://shop.example/a/../orders', url: 'https://shop.example/orders' },
    ];
    for (const c of ok) {
      const r = await verify(t, { access_token: p, dpop: await rawProof(t, agent, p, c.htu), method: 'get', url: c.url });
      assert.equal(r.valid, true, `${c.htu} vs ${c.url}: ${r.error_description}`);
    }
    const bad = [
      { htu: 'https://shop.example/orders/', url: URL_ },
      { htu: 'https://shop.example:8443/orders', url: URL_ },
      { htu: 'http://shop.example/orders', url: URL_ },
      { htu: 'https://shop.example/Orders', url: URL_ },
      { htu: 'https://evil.example/orders', url: URL_ },
    ];
    for (const c of bad) await expectError({ access_token: p, dpop: await rawProof(t, agent, p, c.htu), method: 'GET', url: c.url }, 'dpop_url_mismatch');
    await expectError({ access_token: p, dpop: await proof(t, agent, p), method: 'POST', url: URL_ }, 'dpop_method_mismatch');
  });

  it('with `site` accepts any url (a proxy address); without, the pass must be for the host of url', async () => {
    const p = (await getPass(t, agent)).access_token;
    const internal = 'http://10.0.0.5:3000/orders';
    const r = await verify(t, { access_token: p, dpop: await proof(t, agent, p, { url: internal }), method: 'GET', url: internal, site: 'shop.example' });
    assert.equal(r.valid, true, r.error_description);
    assert.equal(r.site, 'shop.example');
    await expectError({ access_token: p, dpop: await proof(t, agent, p, { url: internal }), method: 'GET', url: internal }, 'wrong_site');
    await expectError({ access_token: p, dpop: await proof(t, agent, p, { url: internal }), method: 'GET', url: internal, site: 'other.example' }, 'wrong_site');
    const elsewhere = 'https://other.example/orders';
    await expectError({ access_token: p, dpop: await proof(t, agent, p, { url: elsewhere }), method: 'GET', url: elsewhere }, 'wrong_site');
  });

  it('binds the proof to the pass: other key dpop_key_mismatch, other token invalid_dpop, missing invalid_request', async () => {
    const p = (await getPass(t, agent)).access_token;
    const other = await createAgent(t);
    await expectError({ access_token: p, dpop: await proof(t, other, p), method: 'GET', url: URL_ }, 'dpop_key_mismatch');
    const p2 = (await getPass(t, agent)).access_token;
    await expectError({ access_token: p, dpop: await proof(t, agent, p2), method: 'GET', url: URL_ }, 'invalid_dpop');
    await expectError({ access_token: p, dpop: 'not.a.proof', method: 'GET', url: URL_ }, 'invalid_dpop');
    await expectError({ access_token: p, dpop: '', method: 'GET', url: URL_ }, 'invalid_request');
  });

  it('refuses tokens that are not passes: step-up, revocation JWT, agent JWT, forged, other issuer', async () => {
    const stepup = await mintStepup(t, agent);
    const revocation = await t.services.keys.sign({ type: 'revocation', iss: t.config.baseUrl, iat: seconds(t.clock.now()), rev_seq: 1, revoked_agents: [], revoked_grants: [] }, REVOCATION_TYP);
    const agentToken = await createAgentJwt(agent.privateKey, agent.id, { iat: seconds(t.clock.now()) });
    const claims = decodeJwt(pass);
    const { kid } = decodeProtectedHeader(pass);
    const foreign = await generateKeyPair('ES256');
    const forged = await new SignJWT({ ...claims }).setProtectedHeader({ alg: 'ES256', typ: PASS_TYP, kid: kid ?? '' }).sign(foreign.privateKey);
    const otherIssuer = await t.services.keys.sign({ ...claims, iss: `${t.config.baseUrl}/` }, PASS_TYP);
    const typeAsStepup = await t.services.keys.sign({ ...claims, type: 'stepup' }, PASS_TYP);
    for (const token of [stepup, revocation, agentToken, forged, otherIssuer, typeAsStepup, 'garbage', 'a.b.c']) {
      await expectError({ access_token: token, dpop: await proof(t, agent, token), method: 'GET', url: URL_ }, 'invalid_token');
    }
  });

  it('refuses a revoked agent or grant at once (agent_revoked, grant_revoked)', async () => {
    const a = await createAgent(t);
    const grant = await createGrant(t, a);
    const p = (await getPass(t, a)).access_token;
    assert.equal((await verify(t, await verifyBody(t, a, p))).valid, true);
    await t.services.store.grants.revoke(grant.id, t.clock.now(), await t.services.store.counters.next('rev_seq'));
    await expectError(await verifyBody(t, a, p), 'grant_revoked');

    const b = await createAgent(t);
    await createGrant(t, b);
    const pb = (await getPass(t, b)).access_token;
    await t.app.inject({ method: 'POST', url: `/api/agents/${b.id}/flag`, headers: b.owner.auth, payload: { flag: 'revoked' } });
    await expectError(await verifyBody(t, b, pb), 'agent_revoked');

    const c = await createAgent(t);
    await createGrant(t, c);
    const pc = (await getPass(t, c)).access_token;
    const del = await t.app.inject({ method: 'DELETE', url: `/api/agents/${c.id}`, headers: c.owner.auth });
    assert.equal(del.statusCode, 200);
    await expectError(await verifyBody(t, c, pc), 'agent_revoked');

    // A new approval supersedes the old grant: its passes stop.
    const d = await createAgent(t);
    await createGrant(t, d);
    const pd = (await getPass(t, d)).access_token;
    await t.services.store.grants.supersede(d.id, 'shop.example', t.clock.now());
    await createGrant(t, d);
    await expectError(await verifyBody(t, d, pd), 'grant_revoked');
    assert.equal((await verify(t, await verifyBody(t, d, (await getPass(t, d)).access_token))).valid, true);
  });

  it('answers 200 invalid_request to malformed bodies', async () => {
    const good = await verifyBody(t, agent, pass);
    const bodies: unknown[] = [
      {},
      [],
      { ...good, access_token: 5 },
      { ...good, method: undefined },
      { ...good, url: '' },
      { ...good, stepup_token: null },
      { ...good, site: 7 },
      { ...good, url: 'not a url' },
      { ...good, url: 'ftp://shop.example/orders' },
    ];
    for (const b of bodies) await expectError(b, 'invalid_request');
    const raw = [
      { payload: '{"access_token": ', headers: { 'content-type': 'application/json' } },
      { payload: 'access_token=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
      { payload: 'null', headers: { 'content-type': 'application/json' } },
      { payload: '', headers: { 'content-type': 'application/json' } },
      { payload: 'x'.repeat(2_000_000), headers: { 'content-type': 'application/json' } },
    ];
    for (const r of raw) {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/verify', ...r });
      assert.equal(res.statusCode, 200, `${r.payload.slice(0, 30)} -> ${res.statusCode} ${res.body.slice(0, 200)}`);
      assert.equal(res.json().error, 'invalid_request');
      assert.equal(res.json().valid, false);
    }
  });

  describe('with a step-up token', () => {
    let pass: string; // a fresh pass for each test: earlier tests move the clock
    beforeEach(async () => {
      pass = (await getPass(t, agent)).access_token;
    });

    it('accepts it once (stepup true), then stepup_used_or_expired; records stepup.used', async () => {
      const st = await mintStepup(t, agent, { act: ['checkout'] });
      const r = await verify(t, await verifyBody(t, agent, pass, { stepup_token: st, action: 'checkout' }));
      assert.equal(r.valid, true, r.error_description);
      assert.equal(r.stepup, true);
      await expectError(await verifyBody(t, agent, pass, { stepup_token: st, action: 'checkout' }), 'stepup_used_or_expired');
      const trail = await t.services.store.activity.list(agent.owner.user.id, { before: 0, limit: 5, action: 'stepup.used' });
      assert.equal(trail.length, 1);
      assert.deepEqual(trail[0]?.detail, { actions: ['checkout'] });
      assert.ok(!JSON.stringify(trail).includes(st));
    });

    it('lives 60 s: valid at 59 s, stepup_used_or_expired at 61 s', async () => {
      const early = await mintStepup(t, agent);
      const late = await mintStepup(t, agent);
      t.clock.advance(59_000);
      assert.equal((await verify(t, await verifyBody(t, agent, pass, { stepup_token: early }))).stepup, true);
      t.clock.advance(2_000);
      await expectError(await verifyBody(t, agent, pass, { stepup_token: late }), 'stepup_used_or_expired');
    });

    it('must match the action, the site, the agent and the person', async () => {
      await expectError(await verifyBody(t, agent, pass, { stepup_token: await mintStepup(t, agent, { act: ['checkout'] }), action: 'delete-account' }), 'stepup_wrong_action');
      await expectError(await verifyBody(t, agent, pass, { stepup_token: await mintStepup(t, agent, { aud: 'other.example' }) }), 'stepup_wrong_site');
      const other = await createAgent(t);
      await expectError(await verifyBody(t, agent, pass, { stepup_token: await mintStepup(t, other) }), 'stepup_invalid');
      await expectError(await verifyBody(t, agent, pass, { stepup_token: await mintStepup(t, agent, { user: other.owner.user.id }) }), 'stepup_invalid');
      await expectError(await verifyBody(t, agent, pass, { stepup_token: await mintStepup(t, agent, { cnf: { dpop: other.jkt, jkt: other.jkt } }) }), 'stepup_invalid');
    });

    it('refuses tokens that are not step-up tokens (pass, forged, garbage) with stepup_invalid', async () => {
      const claims = decodeJwt(await mintStepup(t, agent));
      const foreign = await generateKeyPair('ES256');
      const { kid } = decodeProtectedHeader(pass);
      const forged = await new SignJWT({ ...claims }).setProtectedHeader({ alg: 'ES256', typ: 'stepup+jwt', kid: kid ?? '' }).sign(foreign.privateKey);
      const otherPass = (await getPass(t, agent)).access_token;
      for (const st of [otherPass, forged, 'garbage']) await expectError(await verifyBody(t, agent, pass, { stepup_token: st }), 'stepup_invalid');
    });

    it('leaves proof and step-up usable when the other fails before consumption', async () => {
      const st = await mintStepup(t, agent);
      // A bad step-up does not use up the proof ...
      const body = await verifyBody(t, agent, pass, { stepup_token: st, action: 'wrong' });
      await expectError(body, 'stepup_wrong_action');
      const { stepup_token: _s, action: _a, ...noStepup } = body;
      assert.equal((await verify(t, noStepup)).valid, true);
      // ... and a replayed proof does not use up the step-up token.
      await expectError({ ...noStepup, stepup_token: st }, 'dpop_replay');
      assert.equal((await verify(t, await verifyBody(t, agent, pass, { stepup_token: st }))).stepup, true);
    });
  });
});
