import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createDpopProof } from '@mandate/protocol';
import { seconds } from '../src/clock.ts';
import { createAgent, type TestAgent } from './helpers/agents.ts';
import { expectStatus, json, remoteAddress, testApp, type TestApp } from './helpers/app.ts';
import { approve, grantAccess, ownerWithPasskey, poll, type Owner } from './helpers/approvals.ts';
import { verifyEmail } from './helpers/email-links.ts';
import type { TokenBody, VerifyBody } from './helpers/passes.ts';

// The whole protocol over HTTP, as agent, owner and site meet it: access request, passkey approval,
// pass, cloud verify, step-up request and approval, step-up consumption, revocation, re-approval.

const SITE_URL = 'https://shop.example/checkout';

describe('agent <-> owner <-> site, end to end in one process', () => {
  let t: TestApp;
  let owner: Owner;
  let agent: TestAgent;
  before(async () => {
    t = await testApp();
    owner = await ownerWithPasskey(t);
    await verifyEmail(t, owner);
    agent = await createAgent(t, owner, 'Shopper');
  });
  after(() => t.close());

  const token = async (refresh?: string) =>
    t.app.inject({ method: 'POST', url: '/api/v1/token', payload: { agent_id: agent.id, site: 'shop.example', agent_jwt: await agent.jwt(), ...(refresh ? { refresh_token: refresh } : {}) } });
  const verify = async (pass: string, extra: Record<string, unknown> = {}) => {
    const dpop = await createDpopProof(agent.privateKey, agent.publicJwk, { htm: 'POST', htu: SITE_URL, accessToken: pass, iat: seconds(t.clock.now()) });
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/verify', payload: { access_token: pass, dpop, method: 'POST', url: SITE_URL, ...extra } });
    expectStatus(res, 200);
    return json<VerifyBody>(res);
  };

  it('runs request -> approval -> pass -> verify -> step-up -> revocation -> re-approval', async () => {
    expectStatus(await token(), 403); // nothing approved yet

    await grantAccess(t, owner, agent, { scopes: ['orders:read', 'checkout'], user_info: ['user:email'] }, { limits: { max_uses: 10 } });
    const first = await token();
    expectStatus(first, 200);
    const pass = json<TokenBody>(first);
    assert.equal(pass.grant_uses_left, 9);
    assert.deepEqual(pass.scope, ['orders:read', 'checkout']);

    const ok = await verify(pass.access_token);
    assert.equal(ok.valid, true, ok.error_description);
    assert.deepEqual(ok.user_info, { 'user:email': owner.email });
    assert.equal(ok.stepup, false);

    // Sensitive action: the agent asks, the owner approves, the agent polls the token out.
    const req = await t.app.inject({ method: 'POST', url: '/api/v1/stepup', remoteAddress: remoteAddress(), payload: { agent_id: agent.id, site: 'shop.example', action: 'pay 42 EUR', agent_jwt: await agent.jwt() } });
    expectStatus(req, 200);
    const txn = json<{ txn_id: string }>(req).txn_id;
    expectStatus(await approve(t, owner, txn), 200);
    const polled = json<{ status: string; stepup_token?: string }>(await poll(t, txn, await agent.jwt()));
    assert.equal(typeof polled.stepup_token, 'string', JSON.stringify(polled));
    const stepupToken = polled.stepup_token ?? '';

    t.clock.advance(10_000);
    const wrong = await verify(pass.access_token, { stepup_token: stepupToken, action: 'pay 4200 EUR' });
    assert.equal(wrong.error, 'stepup_wrong_action');
    const used = await verify(pass.access_token, { stepup_token: stepupToken, action: 'pay 42 EUR' });
    assert.equal(used.valid, true, used.error_description);
    assert.equal(used.stepup, true);
    assert.equal((await verify(pass.access_token, { stepup_token: stepupToken, action: 'pay 42 EUR' })).error, 'stepup_used_or_expired');

    // Refresh, then the owner revokes the grant: the pass stops at once, no new pass is issued.
    const second = json<TokenBody>(await token(pass.refresh_token));
    const me = json<{ grants: { id: string; site: string }[] }>(await t.app.inject({ url: '/api/me', headers: owner.auth }));
    const grantId = me.grants.find((g) => g.site === 'shop.example')?.id;
    expectStatus(await t.app.inject({ method: 'POST', url: `/api/grants/${grantId}/revoke`, headers: owner.auth }), 200);
    assert.equal((await verify(second.access_token)).error, 'grant_revoked');
    const refused = await token(second.refresh_token);
    expectStatus(refused, 403);
    assert.equal(json<{ detail: string }>(refused).detail, 'no approved access for this site');

    // Approved again: a new grant, new passes; the old pass stays refused.
    await grantAccess(t, owner, agent, { scopes: ['orders:read'] });
    const third = json<TokenBody>(await token());
    assert.equal((await verify(third.access_token)).valid, true);
    assert.equal((await verify(second.access_token)).error, 'grant_revoked');

    // The owner removes the agent: every pass stops at once.
    expectStatus(await t.app.inject({ method: 'DELETE', url: `/api/agents/${agent.id}`, headers: owner.auth }), 200);
    assert.equal((await verify(third.access_token)).error, 'agent_revoked');
    expectStatus(await token(third.refresh_token), 403);
  });
});
