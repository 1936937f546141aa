import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createAgent } from './helpers/agents.ts';
import { expectStatus, json, signUp, testApp, type TestApp } from './helpers/app.ts';
import { accessRequest, addPasskey, approve, assertionOptions, grantAccess, ownerWithPasskey, poll, postAccessRequest, respond, withPasskeySession } from './helpers/approvals.ts';
import { SoftAuthenticator } from './helpers/soft-authenticator.ts';
import { verifyEmail } from './helpers/email-links.ts';

type Detail = { detail: string };
const detail = (res: { json(): unknown }) => (res.json() as Detail).detail;

describe('access requests: POST /api/v1/authz-requests', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp();
  });
  after(() => t.close());

  it('creates a pending request for 300 s, notifies the owner and records the activity', async () => {
    const owner = await ownerWithPasskey(t);
    await verifyEmail(t, owner);
    const agent = await createAgent(t, owner, 'Shopper');
    const res = await postAccessRequest(t, agent, { scopes: ['orders:read', 'list'], user_info: ['user:email'] });
    expectStatus(res, 200);
    const body = json<{ txn_id: string; expires_in: number }>(res);
    assert.match(body.txn_id, /^t_[a-z2-7]{26}$/);
    assert.equal(body.expires_in, 300);
    assert.deepEqual(Object.keys(body).sort(), ['expires_in', 'txn_id']);

    const stored = await t.services.store.authzRequests.byId(body.txn_id);
    assert.equal(stored?.status, 'pending');
    assert.equal(stored?.kind, 'initial');
    assert.equal(stored?.expiresAt, t.clock.now() + 300_000);

    const [note] = (await t.services.store.notifications.list(owner.user.id, { before: 0, limit: 10, since: 0 })).filter((n) => n.type === 'approval');
    assert.deepEqual(note && { txnId: note.txnId, title: note.title, body: note.body, readAt: note.readAt }, { txnId: body.txn_id, title: 'Shopper asks for access to shop.example', body: 'Wants: orders:read, list · and your email', readAt: null });
    const [act] = await t.services.store.activity.list(owner.user.id, { before: 0, limit: 10, action: 'request.created' });
    assert.equal(act?.agentId, agent.id);
    assert.equal(act?.site, 'shop.example');

    const polled = json<Record<string, unknown>>(await poll(t, body.txn_id));
    assert.deepEqual(polled, { status: 'pending', kind: 'initial', agent: 'Shopper', site: 'shop.example', scopes: ['orders:read', 'list'], user_info: ['user:email'] });
  });

  it('checks scopes: 1 to 20 distinct, [a-z0-9_:.-], at most 64 characters (400); wrong types are 422', async () => {
    const owner = await signUp(t.app);
    const agent = await createAgent(t, owner);
    const many = (n: number) => Array.from({ length: n }, (_, i) => `s${i}`);
    const bad: [string, unknown][] = [
      ['no scopes', []],
      ['21 scopes', many(21)],
      ['65 characters', ['a'.repeat(65)]],
      ['upper case', ['Orders:read']],
      ['space', ['orders read']],
      ['slash', ['orders/read']],
      ['non-ASCII', ['commandé']],
      ['empty scope', ['']],
      ['newline', ['a\nb']],
    ];
    for (const [why, scopes] of bad) {
      const res = await postAccessRequest(t, agent, { scopes, site: `bad-${why.replace(/[^a-z0-9]/g, '')}.example` });
      assert.equal(res.statusCode, 400, `${why}: ${res.body}`);
      assert.match(detail(res), /scope/, why);
    }
    for (const scopes of [[1], 'orders', [null]]) expectStatus(await postAccessRequest(t, agent, { scopes }), 422);
    expectStatus(await t.app.inject({ method: 'POST', url: '/api/v1/authz-requests', payload: { agent_id: agent.id, site: 'x.example', agent_jwt: await agent.jwt() } }), 422);

    const edge = await postAccessRequest(t, agent, { site: 'edge.example', scopes: ['a'.repeat(64), 'x_y:z.w-1', ...many(18)] });
    expectStatus(edge, 200);
    // 25 entries that collapse to 20 distinct ones are fine; the count is taken after collapsing.
    const dup = await postAccessRequest(t, agent, { site: 'dup.example', scopes: [...many(20), 's0', 's1', 's2', 's3', 's4'] });
    expectStatus(dup, 200);
    const stored = await t.services.store.authzRequests.byId(json<{ txn_id: string }>(dup).txn_id);
    assert.deepEqual(stored?.scopes, many(20));
  });

  it('checks the site: a lower-cased host name with optional port, 1 to 253 characters', async () => {
    const owner = await signUp(t.app);
    const agent = await createAgent(t, owner);
    for (const site of ['', 'https://shop.example', 'shop.example/path', 'a..b', '-a.example', 'shop.example.', 'sh op.example', `${'a'.repeat(60)}.`.repeat(4) + 'abcdefghij', 'host:70000', 'host:', '[::1]', 'a_b.example']) {
      const res = await postAccessRequest(t, agent, { site });
      assert.equal(res.statusCode, 400, `${JSON.stringify(site)}: ${res.body}`);
      assert.match(detail(res), /invalid site/);
    }
    const upper = await postAccessRequest(t, agent, { site: 'Shop.EXAMPLE.com' });
    expectStatus(upper, 200);
    assert.equal(json<{ site: string }>(await poll(t, json<{ txn_id: string }>(upper).txn_id)).site, 'shop.example.com');
    expectStatus(await postAccessRequest(t, agent, { site: 'localhost:3000' }), 200);
    expectStatus(await postAccessRequest(t, agent, { site: '127.0.0.1' }), 200);
    const longest = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`;
    assert.equal(longest.length, 253);
    expectStatus(await postAccessRequest(t, agent, { site: longest }), 200);
  });

  it('accepts user_info names from the registry only; user:phone only when the owner verified a phone, user:email only when the email is verified', async () => {
    const owner = await signUp(t.app);
    const agent = await createAgent(t, owner);
    const unknown = await postAccessRequest(t, agent, { site: 'u1.example', user_info: ['user:address'] });
    expectStatus(unknown, 400);
    assert.match(detail(unknown), /^unknown user_info field/);
    const phone = await postAccessRequest(t, agent, { site: 'u2.example', user_info: ['user:phone'] });
    expectStatus(phone, 400);
    assert.match(detail(phone), /^unknown user_info field/);
    expectStatus(await postAccessRequest(t, agent, { site: 'u3.example', user_info: [7] }), 422);

    const fields = async () => json<{ fields: { name: string }[] }>(await t.app.inject({ url: '/api/user-info/fields', headers: owner.auth })).fields.map((f) => f.name);
    assert.deepEqual(await fields(), ['user:name'], 'an unverified email is not offered (decisions §25)');
    const email = await postAccessRequest(t, agent, { site: 'u4.example', user_info: ['user:email'] });
    expectStatus(email, 400);
    assert.match(detail(email), /^unknown user_info field/);
    await verifyEmail(t, owner);
    assert.deepEqual(await fields(), ['user:name', 'user:email']);
    const anonymous = json<{ fields: { name: string }[] }>(await t.app.inject({ url: '/api/user-info/fields' })).fields.map((f) => f.name);
    assert.deepEqual(anonymous, ['user:name', 'user:email', 'user:phone']);

    await t.services.store.users.update(owner.user.id, { phone: '+15551234567', phoneVerified: true });
    assert.deepEqual(await fields(), ['user:name', 'user:email', 'user:phone']);
    const ok = await postAccessRequest(t, agent, { site: 'u2.example', user_info: ['user:phone', 'user:name', 'user:phone'] });
    expectStatus(ok, 200);
    const stored = await t.services.store.authzRequests.byId(json<{ txn_id: string }>(ok).txn_id);
    assert.deepEqual(stored?.userInfo, ['user:phone', 'user:name']);
  });

  it('authenticates the agent: 401 for a bad or foreign JWT, 403 for a revoked or removed agent', async () => {
    const owner = await signUp(t.app);
    const agent = await createAgent(t, owner);
    const other = await createAgent(t, owner, 'Other');
    expectStatus(await postAccessRequest(t, agent, { agent_jwt: 'not-a-jwt' }), 401);
    expectStatus(await postAccessRequest(t, agent, { agent_jwt: '' }), 401);
    expectStatus(await postAccessRequest(t, agent, { agent_jwt: await other.jwt() }), 401);
    expectStatus(await postAccessRequest(t, agent, { agent_id: 'ag_nobody', agent_jwt: await agent.jwt() }), 401);

    expectStatus(await t.app.inject({ method: 'POST', url: `/api/agents/${agent.id}/flag`, headers: owner.auth, payload: { flag: 'revoked' } }), 200);
    const revoked = await postAccessRequest(t, agent);
    expectStatus(revoked, 403);
    assert.equal(detail(revoked), 'agent revoked by its owner');
    expectStatus(await t.app.inject({ method: 'DELETE', url: `/api/agents/${other.id}`, headers: owner.auth }), 200);
    expectStatus(await postAccessRequest(t, other), 403);
  });

  it('409 while a request for the site waits; a new one is allowed once it expired', async () => {
    const owner = await signUp(t.app);
    const agent = await createAgent(t, owner);
    const first = await accessRequest(t, agent);
    const again = await postAccessRequest(t, agent, { scopes: ['other'] });
    expectStatus(again, 409);
    assert.match(detail(again), /already waiting/);
    expectStatus(await postAccessRequest(t, agent, { site: 'other.example' }), 200);
    // Another agent of the same owner is not blocked by it.
    expectStatus(await postAccessRequest(t, await createAgent(t, owner, 'Second')), 200);

    t.clock.advance(300_000);
    const fresh = await accessRequest(t, agent);
    assert.notEqual(fresh, first);
    assert.equal((await t.services.store.authzRequests.byId(first))?.status, 'expired');
  });

  it('409 access already approved while a live grant with uses left exists', async () => {
    const owner = await ownerWithPasskey(t);
    const agent = await createAgent(t, owner);
    await grantAccess(t, owner, agent, {}, { limits: { max_uses: 1 } });
    const res = await postAccessRequest(t, agent);
    expectStatus(res, 409);
    assert.equal(detail(res), 'access already approved');
    // Once its one use is spent, the agent may ask again.
    const grant = await t.services.store.grants.activeFor(agent.id, 'shop.example');
    assert.ok(grant && (await t.services.store.grants.issuePass(grant.id, { now: t.clock.now(), newRefreshHash: 'x' })));
    expectStatus(await postAccessRequest(t, agent), 200);
  });

  it('a grant past its expiry does not block a new request', async () => {
    const owner = await ownerWithPasskey(t);
    const agent = await createAgent(t, owner);
    await grantAccess(t, owner, agent, { site: 'exp.example' }, { limits: { expires_in: 60 } });
    expectStatus(await postAccessRequest(t, agent, { site: 'exp.example' }), 409);
    t.clock.advance(60_000);
    expectStatus(await postAccessRequest(t, agent, { site: 'exp.example' }), 200);
  });

  it('limits to 20 requests per agent and site per 300 s (429 with Retry-After)', async () => {
    const owner = await signUp(t.app);
    const agent = await createAgent(t, owner);
    const codes: number[] = [];
    for (let i = 0; i < 20; i++) codes.push((await postAccessRequest(t, agent, { site: 'busy.example' })).statusCode);
    assert.deepEqual(codes, [200, ...Array(19).fill(409)]);
    const limited = await postAccessRequest(t, agent, { site: 'busy.example' });
    expectStatus(limited, 429);
    assert.ok(Number(limited.headers['retry-after']) >= 1);
    assert.equal(json<{ detail: string }>(limited).detail, 'rate limit exceeded');
    // Counted per site: another site is not limited.
    expectStatus(await postAccessRequest(t, agent, { site: 'calm.example' }), 200);
    t.clock.advance(300_000);
    expectStatus(await postAccessRequest(t, agent, { site: 'busy.example' }), 200);
  });
});

describe('polling: GET /api/v1/authz-requests/{txn_id}', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp();
  });
  after(() => t.close());

  it('reads pending at 299 s and expired at 300 s, and stores the expiry', async () => {
    const owner = await signUp(t.app);
    const agent = await createAgent(t, owner);
    const txn = await accessRequest(t, agent);
    t.clock.advance(299_000);
    assert.equal(json<{ status: string }>(await poll(t, txn)).status, 'pending');
    t.clock.advance(1_000);
    assert.equal(json<{ status: string }>(await poll(t, txn)).status, 'expired');
    assert.equal((await t.services.store.authzRequests.byId(txn))?.status, 'expired');
  });

  it('404 for unknown and malformed ids, 422 for over-long ones and NUL characters', async () => {
    for (const id of ['t_aaaaaaaaaaaaaaaaaaaaaaaaaa', 't_', 'x', 'gr_aaaaaaaaaaaaaaaaaaaaaaaaaa', 'T_ABC']) {
      const res = await poll(t, id);
      assert.equal(res.statusCode, 404, `${id}: ${res.body}`);
    }
    expectStatus(await poll(t, `t_${'a'.repeat(100)}`), 422);
    expectStatus(await poll(t, '%00'), 422);
  });
});

describe('owner approval: /api/txn/{txn_id}/...', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp();
  });
  after(() => t.close());

  it('approves with a passkey, creates the grant, dismisses other devices, shows in /api/me', async () => {
    const owner = await ownerWithPasskey(t);
    await verifyEmail(t, owner);
    const agent = await createAgent(t, owner, 'Buyer');
    const txn = await accessRequest(t, agent, { scopes: ['orders:read', 'orders:write'], user_info: ['user:name', 'user:email'] });

    const me = json<{ pending: Record<string, unknown>[]; grants: unknown[] }>(await t.app.inject({ url: '/api/me', headers: owner.auth }));
    assert.deepEqual(me.pending, [{
      id: txn, kind: 'initial', agent: 'Buyer', agent_id: agent.id, site: 'shop.example', scopes: ['orders:read', 'orders:write'],
      user_info: ['user:name', 'user:email'], created_at: new Date(t.clock.now()).toISOString(), expires_at: new Date(t.clock.now() + 300_000).toISOString(),
    }]);
    assert.deepEqual(me.grants, []);

    const res = await approve(t, owner, txn);
    expectStatus(res, 200);
    assert.deepEqual(json(res), { status: 'approved' });
    assert.equal(json<{ status: string }>(await poll(t, txn)).status, 'approved');

    const stored = await t.services.store.authzRequests.byId(txn);
    const grant = await t.services.store.grants.activeFor(agent.id, 'shop.example');
    assert.ok(grant);
    assert.match(grant.id, /^gr_[a-z2-7]{26}$/);
    assert.equal(stored?.grantId, grant.id);
    assert.deepEqual(grant.scopes, ['orders:read', 'orders:write']);
    assert.deepEqual(grant.userInfo, ['user:name', 'user:email']);
    assert.equal(grant.expiresAt, null);
    assert.equal(grant.usesLeft, null);
    assert.equal(grant.refreshHash, null);

    const [answered] = (await t.services.store.notifications.list(owner.user.id, { before: 0, limit: 10, since: 0 })).filter((n) => n.txnId === txn);
    assert.equal(answered?.readAt, t.clock.now(), 'an answered request\'s notification counts as read');
    const after = json<{ pending: unknown[]; grants: Record<string, unknown>[] }>(await t.app.inject({ url: '/api/me', headers: owner.auth }));
    assert.deepEqual(after.pending, []);
    assert.deepEqual(after.grants, [{
      id: grant.id, agent_id: agent.id, agent_name: agent.name, site: 'shop.example', resource: null, scopes: ['orders:read', 'orders:write'], user_info: ['user:name', 'user:email'],
      expires_at: null, uses_left: null, created_at: new Date(t.clock.now()).toISOString(), sign_ins: [],
    }]);

    const [act] = await t.services.store.activity.list(owner.user.id, { before: 0, limit: 10, action: 'request.approved' });
    assert.equal(act?.agentId, agent.id);
    assert.deepEqual(act?.detail['scopes'], ['orders:read', 'orders:write']);
    assert.deepEqual(act?.detail['limits'], { expires_in: null, max_uses: null });
    assert.ok(!JSON.stringify(act?.detail).includes('signature'), 'no assertion in the audit trail');
  });

  it('401 without assertion, with a forged one and with one made for another request; the request stays pending', async () => {
    const owner = await ownerWithPasskey(t);
    const agent = await createAgent(t, owner);
    const txn = await accessRequest(t, agent, { site: 'a.example' });
    const otherTxn = await accessRequest(t, agent, { site: 'b.example' });

    expectStatus(await respond(t, owner, txn, { approve: true }), 401);
    expectStatus(await respond(t, owner, txn, { approve: true, assertion: null }), 401);
    expectStatus(await respond(t, owner, txn, { approve: true, assertion: {} }), 401);
    const options = await assertionOptions(t, owner, txn);
    expectStatus(await respond(t, owner, txn, { approve: true, assertion: owner.authenticator.assert(options, { challenge: 'Zm9yZ2Vk' }) }), 401);
    const fresh = await assertionOptions(t, owner, txn);
    expectStatus(await respond(t, owner, txn, { approve: true, assertion: owner.authenticator.assert(fresh, { origin: 'https://evil.example' }) }), 401);
    const theirs = await assertionOptions(t, owner, otherTxn);
    expectStatus(await respond(t, owner, txn, { approve: true, assertion: owner.authenticator.assert(theirs) }), 401);
    // A passkey the owner never registered.
    const stranger = new SoftAuthenticator();
    await addPasskey(t, await signUp(t.app), stranger);
    expectStatus(await respond(t, owner, txn, { approve: true, assertion: stranger.assert({ challenge: (await assertionOptions(t, owner, txn)).challenge }) }), 401);
    // Without a session at all.
    expectStatus(await t.app.inject({ method: 'POST', url: `/api/txn/${txn}/response`, payload: { approve: false } }), 401);
    expectStatus(await t.app.inject({ url: `/api/txn/${txn}/assertion-options` }), 401);

    assert.equal(json<{ status: string }>(await poll(t, txn)).status, 'pending');
    assert.equal(await t.services.store.grants.activeFor(agent.id, 'a.example'), undefined);
    expectStatus(await approve(t, owner, txn), 200);
  });

  it('denies with the session only; a decided request answers 409 to everything', async () => {
    const owner = await ownerWithPasskey(t);
    const agent = await createAgent(t, owner);
    const txn = await accessRequest(t, agent);
    const spare = await assertionOptions(t, owner, txn);
    const res = await respond(t, owner, txn, { approve: false });
    expectStatus(res, 200);
    assert.deepEqual(json(res), { status: 'denied' });
    assert.equal(json<{ status: string }>(await poll(t, txn)).status, 'denied');
    assert.equal(await t.services.store.grants.activeFor(agent.id, 'shop.example'), undefined);
    assert.equal((await t.services.store.activity.list(owner.user.id, { before: 0, limit: 10, action: 'request.denied' })).length, 1);

    expectStatus(await respond(t, owner, txn, { approve: true, assertion: owner.authenticator.assert(spare) }), 409);
    expectStatus(await respond(t, owner, txn, { approve: false }), 409);
    expectStatus(await t.app.inject({ url: `/api/txn/${txn}/assertion-options`, headers: owner.auth }), 409);
  });

  it('double approval: the second answer gets 409', async () => {
    const owner = await ownerWithPasskey(t);
    const agent = await createAgent(t, owner);
    const txn = await accessRequest(t, agent);
    const spare = await assertionOptions(t, owner, txn);
    expectStatus(await approve(t, owner, txn), 200);
    const second = await respond(t, owner, txn, { approve: true, assertion: owner.authenticator.assert(spare) });
    expectStatus(second, 409);
    assert.match(detail(second), /not pending/);
    expectStatus(await respond(t, owner, txn, { approve: false }), 409);
    assert.equal((await t.services.store.grants.listForAgent(agent.id)).length, 1);
  });

  it('an expired request cannot be approved or denied (409)', async () => {
    const owner = await ownerWithPasskey(t);
    const agent = await createAgent(t, owner);
    const txn = await accessRequest(t, agent);
    t.clock.advance(10_000);
    const options = await assertionOptions(t, owner, txn);
    t.clock.advance(290_000);
    const res = await respond(t, owner, txn, { approve: true, assertion: owner.authenticator.assert(options) });
    expectStatus(res, 409);
    assert.match(detail(res), /expired/);
    expectStatus(await respond(t, owner, txn, { approve: false }), 409);
    expectStatus(await t.app.inject({ url: `/api/txn/${txn}/assertion-options`, headers: owner.auth }), 409);
    assert.equal((await t.services.store.authzRequests.byId(txn))?.status, 'expired');
  });

  it("404 for another owner's request and for unknown ids", async () => {
    const owner = await ownerWithPasskey(t);
    const agent = await createAgent(t, owner);
    const txn = await accessRequest(t, agent);
    const intruder = await ownerWithPasskey(t);
    expectStatus(await t.app.inject({ url: `/api/txn/${txn}/assertion-options`, headers: intruder.auth }), 404);
    expectStatus(await respond(t, intruder, txn, { approve: false }), 404);
    expectStatus(await respond(t, intruder, txn, { approve: true, assertion: intruder.authenticator.assert({ challenge: 'x' }) }), 404);
    for (const id of ['t_aaaaaaaaaaaaaaaaaaaaaaaaaa', 'nope']) {
      expectStatus(await t.app.inject({ url: `/api/txn/${id}/assertion-options`, headers: owner.auth }), 404);
      expectStatus(await respond(t, owner, id, { approve: false }), 404);
    }
    assert.equal(json<{ status: string }>(await poll(t, txn)).status, 'pending');
  });

  it('409 for assertion options when the owner has no passkey yet', async () => {
    const owner = await signUp(t.app);
    const agent = await createAgent(t, owner);
    const txn = await accessRequest(t, agent);
    expectStatus(await t.app.inject({ url: `/api/txn/${txn}/assertion-options`, headers: owner.auth }), 409);
  });

  it('narrows scopes and user_info and sets limits; widening, unknown names and bad limits are 400', async () => {
    const owner = await ownerWithPasskey(t);
    await verifyEmail(t, owner);
    const agent = await createAgent(t, owner);
    const txn = await accessRequest(t, agent, { scopes: ['list', 'apply', 'pay'], user_info: ['user:name', 'user:email'] });
    const bad: [string, Record<string, unknown>][] = [
      ['widen scopes', { scopes: ['list', 'admin'] }],
      ['no scopes', { scopes: [] }],
      ['widen user_info', { user_info: ['user:name', 'user:phone'] }],
      ['unknown user_info', { user_info: ['user:shoe_size'] }],
      ['expires_in 59', { limits: { expires_in: 59 } }],
      ['expires_in too long', { limits: { expires_in: 31_536_001 } }],
      ['max_uses 0', { limits: { max_uses: 0 } }],
    ];
    for (const [why, extra] of bad) {
      const options = await assertionOptions(t, owner, txn);
      const res = await respond(t, owner, txn, { approve: true, assertion: owner.authenticator.assert(options), ...extra });
      assert.equal(res.statusCode, 400, `${why}: ${res.body}`);
    }
    expectStatus(await respond(t, owner, txn, { approve: true, limits: { max_uses: 1.5 } }), 422);
    expectStatus(await respond(t, owner, txn, { approve: 'yes' }), 422);

    const res = await approve(t, owner, txn, { scopes: ['apply', 'list', 'list'], user_info: ['user:email'], limits: { expires_in: 3600, max_uses: 5 } });
    expectStatus(res, 200);
    const grant = await t.services.store.grants.activeFor(agent.id, 'shop.example');
    assert.deepEqual(grant?.scopes, ['apply', 'list']);
    assert.deepEqual(grant?.userInfo, ['user:email']);
    assert.equal(grant?.expiresAt, t.clock.now() + 3_600_000);
    assert.equal(grant?.usesLeft, 5);
    const [act] = await t.services.store.activity.list(owner.user.id, { before: 0, limit: 10, action: 'request.approved' });
    assert.deepEqual(act?.detail['limits'], { expires_in: 3600, max_uses: 5 });
    // The agent's poll reads what was granted, not what it asked for.
    const polled = json<{ status: string; scopes: string[]; user_info: string[] }>(await poll(t, txn));
    assert.deepEqual([polled.status, polled.scopes, polled.user_info], ['approved', ['apply', 'list'], ['user:email']]);

    // Clearing user_info entirely is narrowing too.
    const txn2 = await accessRequest(t, agent, { site: 'clear.example', user_info: ['user:name'] });
    expectStatus(await approve(t, owner, txn2, { user_info: [], limits: null }), 200);
    assert.deepEqual((await t.services.store.grants.activeFor(agent.id, 'clear.example'))?.userInfo, []);
  });

  it('cross-site cookie requests cannot answer', async () => {
    const owner = await ownerWithPasskey(t);
    const agent = await createAgent(t, owner);
    const txn = await accessRequest(t, agent);
    const res = await t.app.inject({ method: 'POST', url: `/api/txn/${txn}/response`, headers: { cookie: `session=${owner.session_token}`, origin: 'https://evil.example' }, payload: { approve: false } });
    expectStatus(res, 403);
    assert.equal(json<{ status: string }>(await poll(t, txn)).status, 'pending');
  });
});

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`concurrent answers (${backend})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp({ backend });
    });
    after(() => t.close());

    it('20 devices approve the same request at once: exactly one 200, one grant, one activity', async () => {
      // More passkeys are added from a passkey session (a password session may only add the first).
      const owner = await withPasskeySession(t, await ownerWithPasskey(t));
      const devices = [owner.authenticator];
      for (let i = 1; i < 20; i++) devices.push(await addPasskey(t, owner));
      const agent = await createAgent(t, owner);
      const txn = await accessRequest(t, agent);
      const answers = [];
      for (const device of devices) answers.push({ approve: true, assertion: device.assert(await assertionOptions(t, owner, txn)) });
      const results = await Promise.all(answers.map((a) => respond(t, owner, txn, a)));
      const codes = results.map((r) => r.statusCode).sort();
      assert.deepEqual(codes, [200, ...Array(19).fill(409)], results.map((r) => r.body).join('\n'));
      assert.equal((await t.services.store.grants.listForAgent(agent.id)).length, 1);
      assert.equal((await t.services.store.activity.list(owner.user.id, { before: 0, limit: 50, action: 'request.approved' })).length, 1);
      const [note] = (await t.services.store.notifications.list(owner.user.id, { before: 0, limit: 50, since: 0 })).filter((n) => n.txnId === txn);
      assert.notEqual(note?.readAt, null);
    });

    it('approvals and denials racing: one wins, and the grant exists only if an approval won', async () => {
      // More passkeys are added from a passkey session (a password session may only add the first).
      const owner = await withPasskeySession(t, await ownerWithPasskey(t));
      const devices = [owner.authenticator];
      for (let i = 1; i < 10; i++) devices.push(await addPasskey(t, owner));
      const agent = await createAgent(t, owner);
      const txn = await accessRequest(t, agent, { site: 'race.example' });
      const answers: Record<string, unknown>[] = [];
      for (const device of devices) answers.push({ approve: true, assertion: device.assert(await assertionOptions(t, owner, txn)) });
      for (let i = 0; i < 10; i++) answers.push({ approve: false });
      const results = await Promise.all(answers.map((a) => respond(t, owner, txn, a)));
      const winners = results.filter((r) => r.statusCode === 200);
      assert.equal(winners.length, 1);
      assert.equal(results.filter((r) => r.statusCode === 409).length, 19);
      const status = json<{ status: string }>(winners[0]!).status;
      assert.equal(json<{ status: string }>(await poll(t, txn)).status, status);
      assert.equal((await t.services.store.grants.listForAgent(agent.id)).length, status === 'approved' ? 1 : 0);
    });

    it('two access requests for the same site at once: one 200, one 409', async () => {
      const owner = await signUp(t.app);
      const agent = await createAgent(t, owner);
      const results = await Promise.all(Array.from({ length: 10 }, () => postAccessRequest(t, agent, { site: 'twice.example' })));
      assert.deepEqual(results.map((r) => r.statusCode).sort(), [200, ...Array(9).fill(409)]);
    });
  });
}
