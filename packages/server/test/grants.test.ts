import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createAgent, type TestAgent } from './helpers/agents.ts';
import { expectStatus, json, testApp, type TestApp } from './helpers/app.ts';
import { accessRequest, approve, grantAccess, ownerWithPasskey, poll, postAccessRequest, type Owner } from './helpers/approvals.ts';
import { verifyEmail } from './helpers/email-links.ts';

type GrantBody = { id: string; agent_id: string; site: string; scopes: string[]; user_info: string[]; expires_at: string | null; uses_left: number | null; created_at: string };

describe('grants', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp();
  });
  after(() => t.close());

  const revSeq = () => t.services.store.counters.current('rev_seq');
  const grantOf = async (agent: TestAgent, site = 'shop.example') => {
    const g = await t.services.store.grants.activeFor(agent.id, site);
    assert.ok(g, 'grant expected');
    return g;
  };
  const revoke = (owner: Owner, id: string) => t.app.inject({ method: 'POST', url: `/api/grants/${id}/revoke`, headers: owner.auth });
  const patchInfo = (owner: Owner, id: string, user_info: unknown) => t.app.inject({ method: 'PATCH', url: `/api/grants/${id}/user-info`, headers: owner.auth, payload: { user_info } });

  it('GET /api/grants lists the live grants of the owner only', async () => {
    const owner = await ownerWithPasskey(t);
    await verifyEmail(t, owner);
    const agent = await createAgent(t, owner);
    await grantAccess(t, owner, agent, { scopes: ['list'], user_info: ['user:email'] }, { limits: { expires_in: 120, max_uses: 3 } });
    await grantAccess(t, owner, agent, { site: 'b.example' });
    const other = await ownerWithPasskey(t);
    await grantAccess(t, other, await createAgent(t, other));

    const res = await t.app.inject({ url: '/api/grants', headers: owner.auth });
    expectStatus(res, 200);
    const list = json<GrantBody[]>(res);
    assert.deepEqual(list.map((g) => g.site).sort(), ['b.example', 'shop.example']);
    const shop = list.find((g) => g.site === 'shop.example');
    assert.deepEqual(shop, {
      id: (await grantOf(agent)).id, agent_id: agent.id, agent_name: agent.name, site: 'shop.example', resource: null, scopes: ['list'], user_info: ['user:email'],
      expires_at: new Date(t.clock.now() + 120_000).toISOString(), uses_left: 3, created_at: new Date(t.clock.now()).toISOString(), sign_ins: [],
    });
    expectStatus(await t.app.inject({ url: '/api/grants' }), 401);
    // An expired grant is no longer listed.
    t.clock.advance(120_000);
    assert.deepEqual(json<GrantBody[]>(await t.app.inject({ url: '/api/grants', headers: owner.auth })).map((g) => g.site), ['b.example']);
  });

  it('revokes at a new rev_seq; it is listed as revoked; a second revoke is 409; others get 404', async () => {
    const owner = await ownerWithPasskey(t);
    const agent = await createAgent(t, owner);
    await grantAccess(t, owner, agent);
    const grant = await grantOf(agent);
    const intruder = await ownerWithPasskey(t);
    expectStatus(await revoke(intruder, grant.id), 404);
    expectStatus(await revoke(owner, 'gr_aaaaaaaaaaaaaaaaaaaaaaaaaa'), 404);
    expectStatus(await revoke(owner, 'nonsense'), 404);
    expectStatus(await t.app.inject({ method: 'POST', url: `/api/grants/${grant.id}/revoke` }), 401);

    const before = await revSeq();
    const res = await revoke(owner, grant.id);
    expectStatus(res, 200);
    const body = json<{ ok: boolean; rev_seq: number }>(res);
    assert.deepEqual(body, { ok: true, rev_seq: before + 1 });
    const stored = await t.services.store.grants.byId(grant.id);
    assert.equal(stored?.status, 'revoked');
    assert.equal(stored?.revSeq, body.rev_seq);
    assert.ok((await t.services.store.grants.listRevoked(t.clock.now())).some((g) => g.id === grant.id));
    const [act] = await t.services.store.activity.list(owner.user.id, { before: 0, limit: 5, action: 'grant.revoked' });
    assert.equal(act?.detail['rev_seq'], body.rev_seq);

    expectStatus(await revoke(owner, grant.id), 409);
    assert.equal(await revSeq(), body.rev_seq, 'a refused revoke does not advance rev_seq');
    assert.deepEqual(json<{ grants: unknown[] }>(await t.app.inject({ url: '/api/me', headers: owner.auth })).grants, []);
  });

  it('after a revoke the agent may ask again; approving again supersedes the revoked grant and advances rev_seq', async () => {
    const owner = await ownerWithPasskey(t);
    const agent = await createAgent(t, owner);
    await grantAccess(t, owner, agent);
    const old = await grantOf(agent);
    expectStatus(await revoke(owner, old.id), 200);
    const txn = await accessRequest(t, agent);
    const before = await revSeq();
    expectStatus(await approve(t, owner, txn), 200);
    assert.equal(await revSeq(), before + 1);
    assert.equal((await t.services.store.grants.byId(old.id))?.status, 'superseded');
    assert.equal((await t.services.store.grants.byId(old.id))?.supersededAt, t.clock.now());
    const fresh = await grantOf(agent);
    assert.notEqual(fresh.id, old.id);
  });

  it('replacing an active grant (its uses spent) supersedes it without touching rev_seq', async () => {
    const owner = await ownerWithPasskey(t);
    const agent = await createAgent(t, owner);
    await grantAccess(t, owner, agent, {}, { limits: { max_uses: 1 } });
    const old = await grantOf(agent);
    assert.ok(await t.services.store.grants.issuePass(old.id, { now: t.clock.now(), newRefreshHash: 'h' }));
    const txn = await accessRequest(t, agent);
    const before = await revSeq();
    expectStatus(await approve(t, owner, txn), 200);
    assert.equal(await revSeq(), before);
    assert.equal((await t.services.store.grants.byId(old.id))?.status, 'superseded');
    assert.equal((await t.services.store.grants.listForAgent(agent.id)).filter((g) => g.status === 'active').length, 1);
  });

  it('PATCH user-info narrows or clears; widening is 400 and needs a fresh approval on the phone', async () => {
    const owner = await ownerWithPasskey(t);
    await t.services.store.users.update(owner.user.id, { phone: '+15550001111', phoneVerified: true });
    await verifyEmail(t, owner);
    const agent = await createAgent(t, owner);
    await grantAccess(t, owner, agent, { user_info: ['user:name', 'user:email'] });
    const grant = await grantOf(agent);

    const widen = await patchInfo(owner, grant.id, ['user:email', 'user:phone']);
    expectStatus(widen, 400);
    assert.match(json<{ detail: string }>(widen).detail, /fresh approval on the phone/);
    expectStatus(await patchInfo(owner, grant.id, ['user:shoe_size']), 400);
    expectStatus(await patchInfo(owner, grant.id, 'user:name'), 422);
    expectStatus(await patchInfo(await ownerWithPasskey(t), grant.id, []), 404);
    assert.deepEqual((await grantOf(agent)).userInfo, ['user:name', 'user:email']);

    const narrowed = await patchInfo(owner, grant.id, ['user:email', 'user:email']);
    expectStatus(narrowed, 200);
    assert.deepEqual(json<GrantBody>(narrowed).user_info, ['user:email']);
    assert.deepEqual((await grantOf(agent)).userInfo, ['user:email']);
    // Once removed, a field cannot come back this way either.
    expectStatus(await patchInfo(owner, grant.id, ['user:name']), 400);
    expectStatus(await patchInfo(owner, grant.id, []), 200);
    assert.deepEqual((await grantOf(agent)).userInfo, []);
    const acts = await t.services.store.activity.list(owner.user.id, { before: 0, limit: 5, action: 'grant.user_info_narrowed' });
    assert.equal(acts.length, 2);
    assert.deepEqual(acts[1]?.detail['to'], ['user:email']);

    expectStatus(await revoke(owner, grant.id), 200);
    expectStatus(await patchInfo(owner, grant.id, []), 409);
  });

  for (const how of ['removal', 'revoked flag'] as const) {
    it(`agent ${how}: pending requests are cancelled (read denied) and grants revoked at that rev_seq`, async () => {
      const owner = await ownerWithPasskey(t);
      const agent = await createAgent(t, owner);
      const bystander = await createAgent(t, owner, 'Bystander');
      await grantAccess(t, owner, agent);
      await grantAccess(t, owner, agent, { site: 'b.example' });
      await grantAccess(t, owner, bystander);
      const pending = await accessRequest(t, agent, { site: 'c.example' });
      const theirs = await accessRequest(t, bystander, { site: 'c.example' });

      const res = how === 'removal'
        ? await t.app.inject({ method: 'DELETE', url: `/api/agents/${agent.id}`, headers: owner.auth })
        : await t.app.inject({ method: 'POST', url: `/api/agents/${agent.id}/flag`, headers: owner.auth, payload: { flag: 'revoked' } });
      expectStatus(res, 200);
      const stopped = await t.services.store.agents.byId(agent.id);
      assert.ok(stopped?.flagRevSeq);

      assert.equal(json<{ status: string }>(await poll(t, pending)).status, 'denied');
      assert.equal(json<{ status: string }>(await poll(t, theirs)).status, 'pending');
      const grants = await t.services.store.grants.listForAgent(agent.id);
      assert.equal(grants.length, 2);
      for (const g of grants) {
        assert.equal(g.status, 'revoked');
        assert.equal(g.revSeq, stopped.flagRevSeq);
      }
      assert.equal((await grantOf(bystander)).status, 'active');
      const me = json<{ pending: { id: string }[]; grants: { agent_id: string }[] }>(await t.app.inject({ url: '/api/me', headers: owner.auth }));
      assert.deepEqual(me.pending.map((p) => p.id), [theirs]);
      assert.deepEqual(me.grants.map((g) => g.agent_id), [bystander.id]);
      // The cancelled request cannot be approved any more.
      expectStatus(await t.app.inject({ url: `/api/txn/${pending}/assertion-options`, headers: owner.auth }), 409);
      expectStatus(await postAccessRequest(t, agent), 403);
    });
  }
});
