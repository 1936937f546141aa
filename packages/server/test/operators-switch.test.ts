import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { type PassClaims, type RevocationClaims, revocationVerdict, verifyRevocationSnapshot } from '@mandate/protocol';
import { seconds } from '../src/clock.ts';
import { signInBasis } from '../src/domain/oidc/standing.ts';
import type { OidcSignInRecord } from '../src/store/ports/index.ts';
import { expectStatus, json, signUp, testApp, type TestApp } from './helpers/app.ts';
import { createAgent, createGrant, type TestAgent } from './helpers/agents.ts';
import { verifyEmail } from './helpers/email-links.ts';
import { getPass, requestToken, verify, verifyBody } from './helpers/passes.ts';

type Owner = Awaited<ReturnType<typeof signUp>>;
interface Switched { id: string; status: string; changed: boolean; agents_blocked: number; agents_unblocked: number; user_id: string }

/**
 * The admin switch (decisions §17): off blocks every live agent the operator created (cloud verify,
 * the revocation list, agent status, new passes, OIDC sign-ins), keeps their grants; on unblocks
 * exactly those, new passes work at once and passes minted before the off stay refused. Agents are
 * tied to the operator in the store, as the operator API (to come) will create them.
 */
for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`operators: the admin switch (${backend})`, () => {
    let t: TestApp;
    let admin: Owner;
    let registrant: Owner;
    before(async () => {
      t = await testApp({ backend, env: { ADMIN_EMAILS: 'root@example.com' } });
      admin = await signUp(t.app, 'root@example.com');
      await verifyEmail(t, admin);
      registrant = await signUp(t.app);
    });
    after(() => t.close());

    const switchOp = (who: Owner | undefined, oid: string, payload: unknown) =>
      t.app.inject({ method: 'POST', url: `/api/admin/operators/${oid}/status`, headers: who?.auth ?? {}, payload: payload as Record<string, unknown> });
    async function operator(verified = true): Promise<string> {
      const res = await t.app.inject({ method: 'POST', url: '/api/operators', headers: registrant.auth, payload: { name: 'Acme agents', redirect_uris: ['https://acme.example/cb'], browser: 'operator' } });
      expectStatus(res, 200);
      const { id } = json<{ id: string }>(res);
      // The domain check itself is tested in operators.test.ts against a stand-in site.
      if (verified) await t.services.store.operators.markVerified(id, t.clock.now());
      return id;
    }
    async function operatorAgent(oid: string, owner?: Owner): Promise<TestAgent> {
      const agent = await createAgent(t, owner);
      await t.services.store.operators.attachAgent(agent.id, { operatorId: oid, connectionId: 'cn_test', browser: 'operator' });
      await createGrant(t, agent, { scopes: ['list', 'openid'] });
      return agent;
    }
    async function snapshot(): Promise<RevocationClaims> {
      const res = await t.app.inject({ url: '/api/v1/revocation' });
      expectStatus(res, 200);
      const jwks = json<{ keys: Record<string, unknown>[] }>(await t.app.inject({ url: '/api/v1/jwks' }));
      return verifyRevocationSnapshot(json<{ signature: string }>(res).signature, { keys: jwks, issuer: t.config.baseUrl, now: seconds(t.clock.now()) });
    }
    const localVerdict = async (pass: string) => revocationVerdict(decodeJwt(pass) as unknown as PassClaims, await snapshot());
    const cloudVerdict = async (agent: TestAgent, pass: string) => {
      const body = await verify(t, await verifyBody(t, agent, pass));
      return body.valid ? 'valid' : body.error;
    };
    const globalFlag = async (agent: TestAgent) => json<{ global_flag: string }>(await t.app.inject({ url: `/api/v1/agents/${agent.id}/status` })).global_flag;
    const signIn = (agent: TestAgent): OidcSignInRecord => ({
      sid: 'sid', clientId: 'c_x', userId: agent.owner.user.id, agentId: agent.id, grantId: 'gr_x', site: 'shop.example', scopes: ['openid'], amr: ['pwd'],
      authTime: seconds(t.clock.now()), refreshHash: 'h', createdAt: t.clock.now(), expiresAt: t.clock.now() + 86_400_000, endedAt: null, dpopJkt: null, resource: null,
    });
    const signInStands = async (agent: TestAgent) => (await signInBasis(t.services, signIn(agent), t.clock.now())) !== undefined;

    it('admin only: 401 signed out, 403 for anyone else; 404 for an unknown operator (422 for an over-long id); 409 until the domain is verified; bad bodies 422', async () => {
      const oid = await operator(false);
      expectStatus(await switchOp(undefined, oid, { enabled: true }), 401);
      expectStatus(await switchOp(registrant, oid, { enabled: true }), 403);
      expectStatus(await t.app.inject({ url: '/api/admin/operators', headers: registrant.auth }), 403);
      expectStatus(await t.app.inject({ url: '/api/admin/operators' }), 401);
      for (const bad of ['op_missing', 'xyz', 'op_A%20B']) expectStatus(await switchOp(admin, bad, { enabled: true }), 404);
      expectStatus(await switchOp(admin, 'op_' + 'a'.repeat(70), { enabled: true }), 422);
      const refused = await switchOp(admin, oid, { enabled: true });
      expectStatus(refused, 409);
      assert.match(json<{ detail: string }>(refused).detail, /not verified/);
      for (const body of [undefined, null, {}, { enabled: 'yes' }, { enabled: 1 }, { enabled: true, extra: 1 }, [true], 'true']) {
        const res = await t.app.inject({ method: 'POST', url: `/api/admin/operators/${oid}/status`, headers: { ...admin.auth, 'content-type': 'application/json' }, payload: body === undefined ? '' : JSON.stringify(body) });
        assert.equal(res.statusCode, 422, `${JSON.stringify(body)}: ${res.statusCode} ${res.body}`);
      }
      assert.equal((await t.services.store.operators.byId(oid))?.status, 'pending', 'nothing changed');
      const listed = json<{ id: string; user_id: string; status: string }[]>(await t.app.inject({ url: '/api/admin/operators', headers: admin.auth }));
      const row = listed.find((o) => o.id === oid);
      assert.equal(row?.user_id, registrant.user.id);
      assert.equal(row?.status, 'pending');
      assert.ok(!JSON.stringify(listed).includes('secret"'), 'no secret in the admin list');
    });

    it('off blocks every live agent the operator created, everywhere; grants are kept; on unblocks exactly those; old passes stay refused', async () => {
      const oid = await operator();
      const first = await operatorAgent(oid);
      const second = await operatorAgent(oid);
      const gone = await operatorAgent(oid);
      expectStatus(await t.app.inject({ method: 'DELETE', url: `/api/agents/${gone.id}`, headers: gone.owner.auth }), 200);
      const ownersOwn = await createAgent(t, first.owner);
      await createGrant(t, ownersOwn);
      const otherOperators = await operatorAgent(await operator());

      const on = await switchOp(admin, oid, { enabled: true });
      expectStatus(on, 200);
      assert.deepEqual([json<Switched>(on).status, json<Switched>(on).changed, json<Switched>(on).agents_unblocked], ['active', true, 0]);
      const before = (await getPass(t, first)).access_token;
      assert.equal(await cloudVerdict(first, before), 'valid');
      assert.equal(await signInStands(first), true);
      const revSeqBefore = await t.services.store.counters.current('rev_seq');

      const off = await switchOp(admin, oid, { enabled: false });
      expectStatus(off, 200);
      assert.deepEqual([json<Switched>(off).status, json<Switched>(off).changed, json<Switched>(off).agents_blocked], ['disabled', true, 2]);
      assert.ok((await t.services.store.counters.current('rev_seq')) > revSeqBefore, 'rev_seq advanced');
      for (const agent of [first, second]) {
        assert.equal((await t.services.store.agents.byId(agent.id))?.status, 'blocked');
        assert.equal(await globalFlag(agent), 'revoked', 'agent status shows it');
        assert.equal(await signInStands(agent), false, 'OIDC sign-ins refused');
        const token = await requestToken(t, agent);
        expectStatus(token, 403);
        const own = await t.app.inject({ url: `/api/v1/agent-status?agent_id=${agent.id}`, headers: { 'x-agent-jwt': await agent.jwt() } });
        expectStatus(own, 403);
        assert.match(json<{ next_step: string }>(own).next_step, /operator/, 'the agent is told why');
        const grants = await t.services.store.grants.listForAgent(agent.id);
        assert.deepEqual(grants.map((g) => g.status), ['active'], 'grants are kept');
      }
      assert.equal(await cloudVerdict(first, before), 'agent_revoked', 'cloud verify refuses at once');
      assert.equal(await localVerdict(before), 'agent_revoked', 'the snapshot lists it');
      const listed = (await snapshot()).revoked_agents.filter((a) => [first.id, second.id].includes(a.id));
      assert.equal(listed.length, 2);
      assert.ok(listed.every((a) => a.flag === 'revoked'));
      assert.equal((await t.services.store.agents.byId(gone.id))?.status, 'removed', 'a removed agent stays removed');
      assert.equal(await globalFlag(ownersOwn), 'ok', 'the owner\'s own agent is untouched');
      assert.equal(await cloudVerdict(ownersOwn, (await getPass(t, ownersOwn)).access_token), 'valid');
      assert.equal(await globalFlag(otherOperators), 'ok', 'another operator\'s agent is untouched');
      const again = await switchOp(admin, oid, { enabled: false });
      assert.deepEqual([json<Switched>(again).changed, json<Switched>(again).agents_blocked], [false, 0]);

      t.clock.advance(60_000);
      const back = await switchOp(admin, oid, { enabled: true });
      expectStatus(back, 200);
      assert.deepEqual([json<Switched>(back).status, json<Switched>(back).agents_unblocked], ['active', 2]);
      for (const agent of [first, second]) {
        assert.equal((await t.services.store.agents.byId(agent.id))?.status, 'active');
        assert.equal(await globalFlag(agent), 'ok');
        assert.equal(await signInStands(agent), true, 'OIDC sign-ins work again');
      }
      assert.equal((await t.services.store.agents.byId(gone.id))?.status, 'removed', 'on unblocks exactly those the off blocked');
      assert.equal(await cloudVerdict(first, before), 'agent_revoked', 'a pass minted before the off stays refused by cloud verify');
      assert.equal(await localVerdict(before), 'agent_revoked', '... and by the snapshot');
      const fresh = (await getPass(t, first)).access_token;
      assert.equal(await cloudVerdict(first, fresh), 'valid', 'new passes work at once');
      assert.equal(await localVerdict(fresh), null);

      const trail = JSON.stringify(json(await t.app.inject({ url: '/api/activity', headers: registrant.auth })));
      assert.ok(trail.includes('operator.switched'));
    });

    it('racing switches: of concurrent offs one blocks, the rest change nothing; a racing on and off end consistent', async () => {
      const oid = await operator();
      expectStatus(await switchOp(admin, oid, { enabled: true }), 200);
      const agents = [await operatorAgent(oid), await operatorAgent(oid)];
      const offs = await Promise.all(Array.from({ length: 4 }, () => switchOp(admin, oid, { enabled: false })));
      for (const r of offs) expectStatus(r, 200);
      const changed = offs.map((r) => json<Switched>(r)).filter((b) => b.changed);
      assert.equal(changed.length, 1);
      assert.equal(changed[0]?.agents_blocked, 2);
      const both = await Promise.all([switchOp(admin, oid, { enabled: true }), switchOp(admin, oid, { enabled: false })]);
      for (const r of both) expectStatus(r, 200);
      const final = (await t.services.store.operators.byId(oid))?.status;
      const statuses = await Promise.all(agents.map(async (a) => (await t.services.store.agents.byId(a.id))?.status));
      assert.deepEqual(statuses, final === 'active' ? ['active', 'active'] : ['blocked', 'blocked'], `operator ${final}, agents ${statuses.join(', ')}`);
    });

    it('an agent the owner also blocked stays blocked after on; one the owner removes while off stays removed', async () => {
      const oid = await operator();
      expectStatus(await switchOp(admin, oid, { enabled: true }), 200);
      const flagged = await operatorAgent(oid);
      const removedWhileOff = await operatorAgent(oid);
      expectStatus(await switchOp(admin, oid, { enabled: false }), 200);
      expectStatus(await t.app.inject({ method: 'POST', url: `/api/agents/${flagged.id}/flag`, headers: flagged.owner.auth, payload: { flag: 'revoked' } }), 200);
      expectStatus(await t.app.inject({ method: 'DELETE', url: `/api/agents/${removedWhileOff.id}`, headers: removedWhileOff.owner.auth }), 200);
      const back = await switchOp(admin, oid, { enabled: true });
      assert.equal(json<Switched>(back).agents_unblocked, 1);
      assert.equal(await globalFlag(flagged), 'revoked', 'the owner\'s own block holds');
      expectStatus(await requestToken(t, flagged), 403);
      assert.equal((await t.services.store.agents.byId(removedWhileOff.id))?.status, 'removed');
    });
  });
}
