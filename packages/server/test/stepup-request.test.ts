import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeProtectedHeader } from 'jose';
import { createAgentJwt, verifyStepupToken, type StepupClaims } from '@mandate/protocol';
import { seconds } from '../src/clock.ts';
import { createAgent, type TestAgent } from './helpers/agents.ts';
import { expectStatus, json, remoteAddress, signUp, testApp, type TestApp } from './helpers/app.ts';
import { approve, grantAccess, ownerWithPasskey, poll, respond } from './helpers/approvals.ts';

type PollBody = { status: string; kind: string; agent: string; site: string; scopes: string[]; user_info: string[]; action?: string; stepup_token?: string; stepup_token_error?: string };

async function postStepup(t: TestApp, agent: TestAgent, body: Record<string, unknown> = {}) {
  return t.app.inject({
    method: 'POST',
    url: '/api/v1/stepup',
    remoteAddress: remoteAddress(),
    payload: { agent_id: agent.id, site: 'shop.example', action: 'pay 42 EUR to ACME', agent_jwt: await agent.jwt(), ...body },
  });
}

async function stepup(t: TestApp, agent: TestAgent, body: Record<string, unknown> = {}): Promise<string> {
  const res = await postStepup(t, agent, body);
  expectStatus(res, 200);
  return json<{ txn_id: string }>(res).txn_id;
}

const polled = async (t: TestApp, txn: string, jwt?: string) => {
  const res = await poll(t, txn, jwt);
  expectStatus(res, 200);
  return json<PollBody>(res);
};

describe('step-up requests: POST /api/v1/stepup', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp();
  });
  after(() => t.close());

  it('403 without approved access; with a grant: {txn_id, expires_in: 300}, owner notified, activity recorded', async () => {
    const owner = await ownerWithPasskey(t);
    const agent = await createAgent(t, owner, 'Payer');
    const refused = await postStepup(t, agent);
    expectStatus(refused, 403);
    assert.equal(json<{ detail: string }>(refused).detail, 'no approved access to this site');

    await grantAccess(t, owner, agent);
    const res = await postStepup(t, agent);
    expectStatus(res, 200);
    const { txn_id, expires_in } = json<{ txn_id: string; expires_in: number }>(res);
    assert.match(txn_id, /^t_/);
    assert.equal(expires_in, 300);
    const notes = await t.services.store.notifications.list(owner.user.id, { before: 0, limit: 10, since: 0 });
    assert.ok(notes.some((n) => n.txnId === txn_id && n.type === 'approval' && n.title === 'Payer asks to act on shop.example' && n.body === 'pay 42 EUR to ACME · approve with your passkey'), JSON.stringify(notes));
    assert.equal((await t.services.store.activity.list(owner.user.id, { before: 0, limit: 10, action: 'stepup.requested' })).length, 1);

    assert.deepEqual(await polled(t, txn_id), { status: 'pending', kind: 'stepup', agent: 'Payer', site: 'shop.example', scopes: [], user_info: [], action: 'pay 42 EUR to ACME' });
    const me = json<{ pending: Record<string, unknown>[] }>(await t.app.inject({ url: '/api/me', headers: owner.auth }));
    assert.equal(me.pending.length, 1);
    assert.equal(me.pending[0]?.['kind'], 'stepup');
    assert.equal(me.pending[0]?.['action'], 'pay 42 EUR to ACME');
    // Step-ups are not limited to one waiting at a time.
    await stepup(t, agent, { action: 'second' });
  });

  it('checks the action: 1 to 200 printable characters (400); wrong type 422', async () => {
    const owner = await ownerWithPasskey(t);
    const agent = await createAgent(t, owner);
    await grantAccess(t, owner, agent);
    for (const action of ['', '   ', 'a'.repeat(201), 'pay\u0007', 'pay \u202eRUE', 'zero\u200bwidth', 'line\nbreak']) {
      const res = await postStepup(t, agent, { action });
      assert.equal(res.statusCode, 400, `${JSON.stringify(action)}: ${res.body}`);
      assert.match(json<{ detail: string }>(res).detail, /invalid action/);
    }
    expectStatus(await postStepup(t, agent, { action: 42 }), 422);
    expectStatus(await postStepup(t, agent, { action: 'é'.repeat(200) }), 200);
    expectStatus(await postStepup(t, agent, { action: 'Überweisung 10 € an Café' }), 200);
  });

  it('authenticates the agent (401, 403 revoked) and refuses revoked or expired access (403)', async () => {
    const owner = await ownerWithPasskey(t);
    const agent = await createAgent(t, owner);
    const other = await createAgent(t, owner, 'Other');
    await grantAccess(t, owner, agent);
    await grantAccess(t, owner, agent, { site: 'short.example' }, { limits: { expires_in: 60 } });
    expectStatus(await postStepup(t, agent, { agent_jwt: 'x.y.z' }), 401);
    expectStatus(await postStepup(t, agent, { agent_jwt: await other.jwt() }), 401);
    // Another agent of the same owner has no grant of its own.
    expectStatus(await postStepup(t, other), 403);
    expectStatus(await postStepup(t, agent, { site: 'SHOP.example' }), 200);
    expectStatus(await postStepup(t, agent, { site: 'not a site' }), 400);

    t.clock.advance(60_000);
    expectStatus(await postStepup(t, agent, { site: 'short.example' }), 403);

    const grant = await t.services.store.grants.activeFor(agent.id, 'shop.example');
    expectStatus(await t.app.inject({ method: 'POST', url: `/api/grants/${grant?.id}/revoke`, headers: owner.auth }), 200);
    expectStatus(await postStepup(t, agent), 403);

    expectStatus(await t.app.inject({ method: 'POST', url: `/api/agents/${agent.id}/flag`, headers: owner.auth, payload: { flag: 'revoked' } }), 200);
    const revoked = await postStepup(t, agent);
    expectStatus(revoked, 403);
    assert.equal(json<{ detail: string }>(revoked).detail, 'agent revoked by its owner');
  });

  it('a grant whose uses are spent still allows a step-up (its last pass may be live)', async () => {
    const owner = await ownerWithPasskey(t);
    const agent = await createAgent(t, owner);
    await grantAccess(t, owner, agent, {}, { limits: { max_uses: 1 } });
    const grant = await t.services.store.grants.activeFor(agent.id, 'shop.example');
    assert.ok(grant && (await t.services.store.grants.issuePass(grant.id, { now: t.clock.now(), newRefreshHash: 'h' })));
    expectStatus(await postStepup(t, agent), 200);
  });

  it('limits to 10 step-up requests per agent per minute (429)', async () => {
    const owner = await ownerWithPasskey(t);
    const agent = await createAgent(t, owner);
    await grantAccess(t, owner, agent);
    for (let i = 0; i < 10; i++) expectStatus(await postStepup(t, agent, { action: `a${i}` }), 200);
    const limited = await postStepup(t, agent);
    expectStatus(limited, 429);
    assert.ok(Number(limited.headers['retry-after']) >= 1);
    t.clock.advance(60_000);
    expectStatus(await postStepup(t, agent), 200);
  });

  it('a step-up request expires after 300 s', async () => {
    const owner = await ownerWithPasskey(t);
    const agent = await createAgent(t, owner);
    await grantAccess(t, owner, agent);
    const txn = await stepup(t, agent);
    t.clock.advance(299_000);
    assert.equal((await polled(t, txn)).status, 'pending');
    t.clock.advance(1_000);
    assert.equal((await polled(t, txn)).status, 'expired');
    expectStatus(await respond(t, owner, txn, { approve: false }), 409);
  });
});

describe('step-up tokens: delivery by GET /api/v1/authz-requests/{txn_id}', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp();
  });
  after(() => t.close());

  async function approvedStepup() {
    const owner = await ownerWithPasskey(t);
    const agent = await createAgent(t, owner, 'Payer');
    await grantAccess(t, owner, agent);
    const txn = await stepup(t, agent);
    const res = await approve(t, owner, txn);
    expectStatus(res, 200);
    assert.deepEqual(json(res), { status: 'approved' });
    return { owner, agent, txn };
  }

  it('no header, a bad JWT or another agent\'s JWT: no token, a reason, and the request stays approved', async () => {
    const { owner, agent, txn } = await approvedStepup();
    const bare = await polled(t, txn);
    assert.equal(bare.status, 'approved');
    assert.equal(bare.stepup_token, undefined);
    assert.match(bare.stepup_token_error ?? '', /X-Agent-JWT/);

    const other = await createAgent(t, owner, 'Other');
    const foreign = await polled(t, txn, await other.jwt());
    assert.equal(foreign.status, 'approved');
    assert.equal(foreign.stepup_token, undefined);
    assert.match(foreign.stepup_token_error ?? '', /agent that asked/);

    for (const jwt of ['garbage', await createAgentJwt(agent.privateKey, agent.id, { iat: seconds(t.clock.now()) - 1000, lifetimeSec: 300 })]) {
      const res = await polled(t, txn, jwt);
      assert.equal(res.stepup_token, undefined);
      assert.ok(res.stepup_token_error);
    }
    // Another owner's agent cannot collect it either.
    const stranger = await createAgent(t, await signUp(t.app), 'Stranger');
    assert.equal((await polled(t, txn, await stranger.jwt())).stepup_token, undefined);
    assert.equal((await t.services.store.authzRequests.byId(txn))?.status, 'approved');

    // The right agent still collects it.
    assert.ok((await polled(t, txn, await agent.jwt())).stepup_token);
  });

  it('the right agent gets a token verifiable with GET /api/v1/jwks, with the claims of decisions §5; then consumed', async () => {
    const { owner, agent, txn } = await approvedStepup();
    const first = await polled(t, txn, await agent.jwt());
    assert.equal(first.status, 'approved');
    assert.equal(first.stepup_token_error, undefined);
    const token = first.stepup_token;
    assert.ok(token);

    const header = decodeProtectedHeader(token);
    assert.equal(header.typ, 'stepup+jwt');
    assert.equal(header.alg, 'ES256');
    const jwks = json<{ keys: { kid: string }[] }>(await t.app.inject({ url: '/api/v1/jwks' }));
    assert.ok(jwks.keys.some((k) => k.kid === header.kid));
    const claims: StepupClaims = await verifyStepupToken(token, {
      keys: jwks as never, issuer: 'http://localhost:8080', now: seconds(t.clock.now()), site: 'shop.example', action: 'pay 42 EUR to ACME', agentId: agent.id,
    });
    const jkt = (await t.services.store.agents.byId(agent.id))?.jkt;
    assert.equal(claims.iss, 'http://localhost:8080');
    assert.equal(claims.sub, agent.id);
    assert.equal(claims.aud, 'shop.example');
    assert.equal(claims.user, owner.user.id);
    assert.deepEqual(claims.act, ['pay 42 EUR to ACME']);
    assert.equal(claims.type, 'stepup');
    assert.ok(claims.jti.length >= 16);
    assert.equal(claims.iat, seconds(t.clock.now()));
    assert.equal(claims.exp, claims.iat + 60);
    assert.deepEqual(claims.cnf, { dpop: jkt, jkt });

    const second = await polled(t, txn, await agent.jwt());
    assert.equal(second.status, 'consumed');
    assert.equal(second.stepup_token, undefined);
    assert.equal(second.stepup_token_error, 'step-up token already delivered');
    assert.equal((await polled(t, txn)).stepup_token_error, 'step-up token already delivered');
    assert.equal((await t.services.store.activity.list(owner.user.id, { before: 0, limit: 10, action: 'stepup.delivered' })).length, 1);
    assert.equal((await t.services.store.activity.list(owner.user.id, { before: 0, limit: 10, action: 'stepup.approved' })).length, 1);
  });

  it('a denied step-up carries no token', async () => {
    const owner = await ownerWithPasskey(t);
    const agent = await createAgent(t, owner);
    await grantAccess(t, owner, agent);
    const txn = await stepup(t, agent);
    expectStatus(await respond(t, owner, txn, { approve: false }), 200);
    const res = await polled(t, txn, await agent.jwt());
    assert.equal(res.status, 'denied');
    assert.equal(res.stepup_token, undefined);
    assert.equal((await t.services.store.activity.list(owner.user.id, { before: 0, limit: 10, action: 'stepup.denied' })).length, 1);
  });

  it('approving a step-up ignores scopes, user_info and limits and creates no grant', async () => {
    const owner = await ownerWithPasskey(t);
    const agent = await createAgent(t, owner);
    await grantAccess(t, owner, agent);
    const txn = await stepup(t, agent);
    expectStatus(await approve(t, owner, txn, { scopes: ['anything'], limits: { max_uses: 3 } }), 200);
    assert.equal((await t.services.store.grants.listForAgent(agent.id)).length, 1);
  });

  it('an approved step-up not collected within 300 s of the approval reads expired', async () => {
    const { agent, txn } = await approvedStepup();
    t.clock.advance(299_000);
    assert.equal((await polled(t, txn)).status, 'approved');
    t.clock.advance(1_000);
    const res = await polled(t, txn, await agent.jwt());
    assert.equal(res.status, 'expired');
    assert.equal(res.stepup_token, undefined);
  });

  it('no token once the grant was revoked after the approval', async () => {
    const { owner, agent, txn } = await approvedStepup();
    const grant = await t.services.store.grants.activeFor(agent.id, 'shop.example');
    expectStatus(await t.app.inject({ method: 'POST', url: `/api/grants/${grant?.id}/revoke`, headers: owner.auth }), 200);
    const res = await polled(t, txn, await agent.jwt());
    assert.equal(res.stepup_token, undefined);
    assert.match(res.stepup_token_error ?? '', /no approved access/);
  });

  it('removing the agent cancels its approved, uncollected step-up (reads denied)', async () => {
    const { owner, agent, txn } = await approvedStepup();
    expectStatus(await t.app.inject({ method: 'DELETE', url: `/api/agents/${agent.id}`, headers: owner.auth }), 200);
    const res = await polled(t, txn);
    assert.equal(res.status, 'denied');
    assert.equal(res.stepup_token, undefined);
  });
});

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`step-up delivery races (${backend})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp({ backend });
    });
    after(() => t.close());

    it('20 concurrent polls with the right JWT: exactly one token', async () => {
      const owner = await ownerWithPasskey(t);
      const agent = await createAgent(t, owner);
      await grantAccess(t, owner, agent);
      const txn = await stepup(t, agent);
      expectStatus(await approve(t, owner, txn), 200);
      const jwt = await agent.jwt();
      const results = await Promise.all(Array.from({ length: 20 }, () => poll(t, txn, jwt)));
      const bodies = results.map((r) => json<PollBody>(r));
      assert.equal(bodies.filter((b) => b.stepup_token).length, 1);
      assert.equal(bodies.filter((b) => b.stepup_token_error === 'step-up token already delivered').length, 19);
      assert.equal((await t.services.store.activity.list(owner.user.id, { before: 0, limit: 50, action: 'stepup.delivered' })).length, 1);
    });
  });
}
