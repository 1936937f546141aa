import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { PASS_TYP } from '@mandate/protocol';
import { sha256Hex } from '../src/crypto/random.ts';
import { iso, seconds } from '../src/clock.ts';
import { json, testApp, type TestApp } from './helpers/app.ts';
import { agentJwt, createAgent, createGrant } from './helpers/agents.ts';
import { getPass, requestToken, type TokenBody } from './helpers/passes.ts';
import { verifyEmail } from './helpers/email-links.ts';

type ErrorBody = { detail: string; next_step?: string };

describe('POST /api/v1/token', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp();
  });
  after(() => t.close());

  it('issues a DPoP pass with the claims of decisions §5 and an opaque refresh token', async () => {
    const agent = await createAgent(t);
    const grant = await createGrant(t, agent, { scopes: ['list', 'apply'] });
    const revSeq = await t.services.store.counters.current('rev_seq');
    const res = await requestToken(t, agent);
    assert.equal(res.statusCode, 200, res.body);
    const body = json<TokenBody>(res);
    assert.equal(body.token_type, 'DPoP');
    assert.equal(body.expires_in, 600);
    assert.deepEqual(body.scope, ['list', 'apply']);
    assert.equal(body.grant_expires_at, null);
    assert.equal(body.grant_uses_left, null);
    assert.ok(body.refresh_token.length >= 40);

    const header = decodeProtectedHeader(body.access_token);
    assert.equal(header.typ, PASS_TYP);
    assert.equal(header.alg, 'ES256');
    assert.equal(typeof header.kid, 'string');
    const c = decodeJwt(body.access_token);
    const now = seconds(t.clock.now());
    assert.equal(c.iss, 'http://localhost:8080');
    assert.equal(c.sub, agent.id);
    assert.equal(c.aud, 'shop.example');
    assert.equal(c.user, agent.owner.user.id);
    assert.deepEqual(c.scope, ['list', 'apply']);
    assert.deepEqual(c.user_info, {});
    assert.deepEqual(c.cnf, { dpop: agent.jkt, jkt: agent.jkt });
    assert.equal(c.type, 'access');
    assert.equal(c.iat, now);
    assert.equal(c.exp, now + 600);
    assert.equal(typeof c.jti, 'string');
    assert.equal(c.grant, grant.id);
    assert.equal(c.rev_seq, revSeq);

    // Only the refresh token's SHA-256 is stored; the activity trail holds no token.
    const stored = await t.services.store.grants.byId(grant.id);
    assert.equal(stored?.refreshHash, sha256Hex(body.refresh_token));
    assert.equal(stored?.passesIssued, 1);
    const trail = await t.services.store.activity.list(agent.owner.user.id, { before: 0, limit: 10, action: 'pass.issued' });
    assert.equal(trail.length, 1);
    assert.equal(trail[0]?.agentId, agent.id);
    assert.equal(trail[0]?.site, 'shop.example');
    const text = JSON.stringify(trail);
    assert.ok(!text.includes(body.refresh_token) && !text.includes(body.access_token));
  });

  it('discloses the approved user-info fields as they are now, the phone and the email only when verified', async () => {
    const agent = await createAgent(t);
    await t.services.store.users.update(agent.owner.user.id, { displayName: 'Ada Lovelace', phone: '+441234567890', phoneVerified: false });
    const grant = await createGrant(t, agent, { userInfo: ['user:name', 'user:email', 'user:phone'] });
    let c = decodeJwt((await getPass(t, agent)).access_token);
    assert.deepEqual(c.user_info, { 'user:name': 'Ada Lovelace' }, 'granted, but neither the phone nor the email is verified: nothing released for them (decisions §25)');
    await verifyEmail(t, agent.owner);
    c = decodeJwt((await getPass(t, agent)).access_token);
    assert.deepEqual(c.user_info, { 'user:name': 'Ada Lovelace', 'user:email': agent.owner.email });
    await t.services.store.users.update(agent.owner.user.id, { phoneVerified: true });
    c = decodeJwt((await getPass(t, agent)).access_token);
    assert.deepEqual(c.user_info, { 'user:name': 'Ada Lovelace', 'user:email': agent.owner.email, 'user:phone': '+441234567890' });
    // Narrowed by the owner: the next pass carries only what is left.
    assert.ok(await t.services.store.grants.setUserInfo(grant.id, ['user:email'], grant.userInfo));
    c = decodeJwt((await getPass(t, agent)).access_token);
    assert.deepEqual(c.user_info, { 'user:email': agent.owner.email });
  });

  it("caps the pass at the grant's expiry and reports it", async () => {
    const agent = await createAgent(t);
    const expiresAt = t.clock.now() + 300_000;
    await createGrant(t, agent, { expiresAt });
    const body = await getPass(t, agent);
    assert.equal(body.expires_in, 300);
    assert.equal(body.grant_expires_at, iso(expiresAt));
    const c = decodeJwt(body.access_token);
    assert.equal(c.exp, seconds(expiresAt));

    t.clock.advance(300_000); // the grant is over
    const res = await requestToken(t, agent, 'shop.example', body.refresh_token);
    assert.equal(res.statusCode, 403);
    assert.match(json<ErrorBody>(res).detail, /expired/);
    assert.ok(json<ErrorBody>(res).next_step);
  });

  it('counts grant uses down and refuses with 403 when none are left', async () => {
    const agent = await createAgent(t);
    await createGrant(t, agent, { usesLeft: 2 });
    const first = await getPass(t, agent);
    assert.equal(first.grant_uses_left, 1);
    const second = await getPass(t, agent, 'shop.example', first.refresh_token);
    assert.equal(second.grant_uses_left, 0);
    const third = await requestToken(t, agent, 'shop.example', second.refresh_token);
    assert.equal(third.statusCode, 403);
    assert.match(json<ErrorBody>(third).detail, /no uses left/);
  });

  it('refuses with 403 without an active grant for the site', async () => {
    const agent = await createAgent(t);
    let res = await requestToken(t, agent);
    assert.equal(res.statusCode, 403);
    assert.equal(json<ErrorBody>(res).detail, 'no approved access for this site');
    assert.match(json<ErrorBody>(res).next_step ?? '', /authz-requests/);

    const grant = await createGrant(t, agent, { site: 'other.example' });
    res = await requestToken(t, agent); // a grant for another site does not count
    assert.equal(res.statusCode, 403);

    const pass = await getPass(t, agent, 'other.example');
    await t.services.store.grants.revoke(grant.id, t.clock.now(), await t.services.store.counters.next('rev_seq'));
    for (const r of [await requestToken(t, agent, 'other.example'), await requestToken(t, agent, 'other.example', pass.refresh_token)]) {
      assert.equal(r.statusCode, 403);
      assert.equal(json<ErrorBody>(r).detail, 'no approved access for this site');
    }
  });

  it('issues without refresh_token only within one hour of the approval (3599 s yes, 3601 s no: 401)', async () => {
    const a = await createAgent(t);
    await createGrant(t, a);
    const b = await createAgent(t);
    await createGrant(t, b);
    t.clock.advance(3599_000);
    const inTime = await requestToken(t, a);
    assert.equal(inTime.statusCode, 200);
    t.clock.advance(2_000); // 3601 s after b's approval
    const late = await requestToken(t, b);
    assert.equal(late.statusCode, 401);
    assert.match(json<ErrorBody>(late).detail, /one hour/);
    assert.match(json<ErrorBody>(late).next_step ?? '', /refresh_token/);
    assert.equal((await requestToken(t, a)).statusCode, 401);
    // The refresh token keeps working after the hour.
    t.clock.advance(7200_000);
    assert.equal((await requestToken(t, a, 'shop.example', json<TokenBody>(inTime).refresh_token)).statusCode, 200);
  });

  it('rotates the refresh token: each one works once, the newest replaces all earlier ones', async () => {
    const agent = await createAgent(t);
    await createGrant(t, agent);
    const p1 = await getPass(t, agent);
    const p2 = await getPass(t, agent, 'shop.example', p1.refresh_token);
    assert.notEqual(p2.refresh_token, p1.refresh_token);
    const reuse = await requestToken(t, agent, 'shop.example', p1.refresh_token);
    assert.equal(reuse.statusCode, 401);
    assert.equal(json<ErrorBody>(reuse).detail, 'refresh token already used or invalid');
    const p3 = await getPass(t, agent, 'shop.example', p2.refresh_token);
    // A call without refresh_token (within the hour) also invalidates the current one.
    await getPass(t, agent);
    assert.equal((await requestToken(t, agent, 'shop.example', p3.refresh_token)).statusCode, 401);
    assert.equal((await requestToken(t, agent, 'shop.example', 'made-up-token')).statusCode, 401);
  });

  it('spends nothing when no signing key can be read: the same refresh token works once the key is back', async () => {
    const agent = await createAgent(t);
    await createGrant(t, agent);
    const p1 = await getPass(t, agent);
    const keys = t.services.keys;
    const signer = keys.signer.bind(keys);
    keys.signer = async () => {
      throw new Error('the signing key cannot be decrypted');
    };
    try {
      assert.equal((await requestToken(t, agent, 'shop.example', p1.refresh_token)).statusCode, 500);
    } finally {
      keys.signer = signer;
    }
    const p2 = await getPass(t, agent, 'shop.example', p1.refresh_token);
    assert.notEqual(p2.refresh_token, p1.refresh_token);
  });

  it("does not accept one site's refresh token for another site", async () => {
    const agent = await createAgent(t);
    await createGrant(t, agent, { site: 'a.example' });
    await createGrant(t, agent, { site: 'b.example' });
    const a = await getPass(t, agent, 'a.example');
    const res = await requestToken(t, agent, 'b.example', a.refresh_token);
    assert.equal(res.statusCode, 401);
    assert.equal(json<ErrorBody>(res).detail, 'refresh token already used or invalid');
  });

  it('authenticates the agent: bad JWT 401, revoked agent 403, malformed body 422', async () => {
    const agent = await createAgent(t);
    await createGrant(t, agent);
    const other = await createAgent(t);
    const wrongKey = await t.app.inject({ method: 'POST', url: '/api/v1/token', payload: { agent_id: agent.id, site: 'shop.example', agent_jwt: (await agentJwt(t, other)).replace(other.id, agent.id) } });
    assert.equal(wrongKey.statusCode, 401);
    const otherJwt = await t.app.inject({ method: 'POST', url: '/api/v1/token', payload: { agent_id: agent.id, site: 'shop.example', agent_jwt: await agentJwt(t, other) } });
    assert.equal(otherJwt.statusCode, 401);

    const flag = await t.app.inject({ method: 'POST', url: `/api/agents/${agent.id}/flag`, headers: agent.owner.auth, payload: { flag: 'revoked' } });
    assert.equal(flag.statusCode, 200);
    const revoked = await requestToken(t, agent);
    assert.equal(revoked.statusCode, 403);
    assert.equal(json<ErrorBody>(revoked).detail, 'agent revoked by its owner');

    for (const payload of [{}, { agent_id: agent.id, site: 'shop.example' }, { agent_id: 1, site: 'x', agent_jwt: 'y' }, { agent_id: 'a', site: 'x', agent_jwt: 'y', refresh_token: 5 }]) {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/token', payload });
      assert.equal(res.statusCode, 422, JSON.stringify(payload));
      assert.ok(Array.isArray(json<{ detail: unknown }>(res).detail));
    }
  });

  it('limits token requests to 60 per agent and site per minute (429 with Retry-After)', async () => {
    const agent = await createAgent(t);
    await createGrant(t, agent);
    await createGrant(t, agent, { site: 'other.example' });
    for (let i = 0; i < 60; i++) assert.equal((await requestToken(t, agent)).statusCode, 200, `call ${i + 1}`);
    const limited = await requestToken(t, agent);
    assert.equal(limited.statusCode, 429);
    assert.ok(Number(limited.headers['retry-after']) >= 1);
    assert.equal(json<ErrorBody>(limited).detail, 'rate limit exceeded');
    assert.equal((await requestToken(t, agent, 'other.example')).statusCode, 200, 'another site has its own budget');
    t.clock.advance(60_000);
    assert.equal((await requestToken(t, agent)).statusCode, 200);
  });
});
