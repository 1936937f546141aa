import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { expectStatus, json, type TestApp, testApp } from './helpers/app.ts';
import { type Owner, accessRequest, ownerWithPasskey } from './helpers/approvals.ts';
import { createGrant, type TestAgent } from './helpers/agents.ts';
import { getPass } from './helpers/passes.ts';
import { type ActiveOperator, activeOperator, connect, operatorAgent } from './helpers/operators.ts';
import { logoutQueued, signedInAtSite, snapshot, standing } from './helpers/operator-effects.ts';

interface ConnectionJson {
  id: string;
  operator: { id: string; name: string; domain: string };
  status: string;
  max_agents: number;
  agents: { id: string; name: string; status: string; created_at: string }[];
  created_at: string;
}

/**
 * The person's side of operator connections (decisions §17) on SQLite and PostgreSQL: the list,
 * the agent limit (suspension and lift) and disconnect.
 */
for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`owner connections (${backend})`, () => {
    let t: TestApp;
    let op: ActiveOperator;
    before(async () => {
      t = await testApp({ backend });
      op = await activeOperator(t, { name: 'Acme' });
    });
    after(() => t.close());

    const list = async (owner: { auth: Record<string, string> }) => {
      const res = await t.app.inject({ url: '/api/connections', headers: owner.auth });
      expectStatus(res, 200);
      return json<ConnectionJson[]>(res);
    };

    it('lists the person\'s connections with operator, limit and agents; agents list marks them via the operator', async () => {
      const owner = await ownerWithPasskey(t);
      const c = await connect(t, op, owner);
      const a = await operatorAgent(t, op, c.connectionId, owner, 'Booker');
      const [shown, ...rest] = await list(owner);
      assert.equal(rest.length, 0);
      assert.equal(shown?.id, c.connectionId);
      assert.deepEqual(shown?.operator, { id: op.id, name: 'Acme', domain: 'acme.example' });
      assert.equal(shown?.status, 'active');
      assert.equal(shown?.max_agents, 5);
      assert.deepEqual(shown?.agents.map((x) => [x.id, x.name, x.status]), [[a.id, 'Booker (via Acme)', 'active']]);
      const agents = json<{ id: string; operator: unknown }[]>(await t.app.inject({ url: '/api/agents', headers: owner.auth }));
      assert.deepEqual(agents.find((x) => x.id === a.id)?.operator, { id: op.id, name: 'Acme', connection_id: c.connectionId });
      const own = await t.app.inject({ method: 'POST', url: '/api/agents', headers: owner.auth, payload: { name: 'Mine', jwk: { kty: 'EC', crv: 'P-256', x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU', y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0' } } });
      expectStatus(own, 200);
      assert.equal(json<{ operator: unknown }>(own).operator, null, 'an agent the owner adds is no operator\'s');
      // Another person sees nothing of it.
      const other = await ownerWithPasskey(t);
      assert.deepEqual(await list(other), []);
    });

    /** An owner, a connection and `n` operator agents, each with a grant at shop.example and a pass. */
    async function setUp(n: number): Promise<{ owner: Owner; cid: string; agents: TestAgent[]; passes: string[] }> {
      const owner = await ownerWithPasskey(t);
      const { connectionId: cid } = await connect(t, op, owner);
      const agents: TestAgent[] = [];
      const passes: string[] = [];
      for (let i = 0; i < n; i++) {
        const a = await operatorAgent(t, op, cid, owner, `Agent ${i}`);
        t.clock.advance(1000);
        await createGrant(t, a);
        passes.push((await getPass(t, a)).access_token);
        agents.push(a);
      }
      return { owner, cid, agents, passes };
    }
    const limit = (owner: { auth: Record<string, string> }, cid: string, payload: unknown) =>
      t.app.inject({ method: 'POST', url: `/api/connections/${cid}/limit`, headers: { ...owner.auth, 'content-type': 'application/json' }, payload: JSON.stringify(payload) });
    const disconnect = (owner: { auth: Record<string, string> }, cid: string) => t.app.inject({ method: 'POST', url: `/api/connections/${cid}/disconnect`, headers: owner.auth });

    it('limit: lowering suspends the newest beyond it (refused everywhere, listed); raising lifts oldest first; old passes stay refused, new ones work', async () => {
      const { owner, cid, agents: [a0, a1, a2], passes: [p0, p1, p2] } = await setUp(3) as { owner: Owner; cid: string; agents: TestAgent[]; passes: string[] };
      if (!a0 || !a1 || !a2 || !p0 || !p1 || !p2) throw new Error('set up');
      const revSeq = await t.services.store.counters.current('rev_seq');
      const lowered = await limit(owner, cid, { max_agents: 1 });
      expectStatus(lowered, 200);
      const shown = json<ConnectionJson>(lowered);
      assert.equal(shown.max_agents, 1);
      assert.deepEqual(shown.agents.map((a) => [a.id, a.status]), [[a0.id, 'active'], [a1.id, 'suspended'], [a2.id, 'suspended']]);
      assert.ok((await t.services.store.counters.current('rev_seq')) > revSeq, 'rev_seq advanced');
      assert.deepEqual(await standing(t, a0, p0), { cloud: 'valid', local: null, token: 200, flag: 'ok' });
      for (const [a, p] of [[a1, p1], [a2, p2]] as const) {
        assert.deepEqual(await standing(t, a, p), { cloud: 'agent_revoked', local: 'agent_revoked', token: 403, flag: 'revoked' });
        const refused = await t.app.inject({ method: 'POST', url: '/api/v1/authz-requests', payload: { agent_id: a.id, site: 'other.example', scopes: ['list'], agent_jwt: await a.jwt() } });
        expectStatus(refused, 403);
        assert.match(json<{ detail: string; next_step: string }>(refused).next_step, /limit/);
      }
      const agentsList = json<{ id: string; status: string }[]>(await t.app.inject({ url: '/api/agents', headers: owner.auth }));
      assert.equal(agentsList.find((a) => a.id === a2.id)?.status, 'suspended');
      // The operator may not add another while the connection is at (over) its limit.
      const more = await t.app.inject({ method: 'POST', url: '/api/v1/operator/agents', headers: op.auth, payload: { connection_id: cid, name: 'More', jwk: a0.publicJwk } });
      expectStatus(more, 403);

      t.clock.advance(5000);
      const raised = await limit(owner, cid, { max_agents: 2 });
      expectStatus(raised, 200);
      assert.deepEqual(json<ConnectionJson>(raised).agents.map((a) => a.status), ['active', 'active', 'suspended'], 'oldest first, up to the limit');
      assert.deepEqual(await standing(t, a1, p1), { cloud: 'agent_revoked', local: 'agent_revoked', token: 200, flag: 'ok' }, 'a pass minted before the suspension stays refused');
      const fresh = (await getPass(t, a1)).access_token;
      assert.deepEqual(await standing(t, a1, fresh), { cloud: 'valid', local: null, token: 200, flag: 'ok' }, 'new passes work at once');
      assert.equal((await standing(t, a2, p2)).cloud, 'agent_revoked');
      const listed = (await snapshot(t)).revoked_agents.map((e) => e.id);
      assert.ok(listed.includes(a1.id) && listed.includes(a2.id), 'the lift is listed for a pass lifetime; the suspension while it lasts');
      // Back to 5: the last one too; same limit again changes nothing.
      expectStatus(await limit(owner, cid, { max_agents: 5 }), 200);
      assert.equal((await t.services.store.agents.byId(a2.id))?.status, 'active');
      const seq = await t.services.store.counters.current('rev_seq');
      expectStatus(await limit(owner, cid, { max_agents: 5 }), 200);
      assert.equal(await t.services.store.counters.current('rev_seq'), seq, 'nothing changed, nothing advanced');
      assert.match(JSON.stringify(json(await t.app.inject({ url: '/api/activity', headers: owner.auth }))), /operator\.connection_limit/);
    });

    it('limit and disconnect: bad input of every shape is a 4xx with detail; another person\'s or an unknown connection is 404; an ended one 409', async () => {
      const { owner, cid } = await setUp(0);
      for (const body of [{}, { max_agents: -1 }, { max_agents: 51 }, { max_agents: 1.5 }, { max_agents: '3' }, { max_agents: null }, { max_agents: 3, extra: 1 }, [3], 'x', null]) {
        const res = await limit(owner, cid, body);
        assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${JSON.stringify(body)}: ${res.statusCode}`);
        assert.ok(json<{ detail: unknown }>(res).detail, 'with detail');
      }
      const other = await ownerWithPasskey(t);
      for (const id of ['cn_%00', 'cn_%ff', '%2e%2e']) {
        const res = await limit(other, id, { max_agents: 3 });
        assert.ok(res.statusCode >= 400 && res.statusCode < 500 && json<{ detail: unknown }>(res).detail, `${id}: ${res.statusCode}`);
      }
      for (const id of [cid, 'cn_unknownunknownunknown00', 'nonsense', 'op_x']) {
        const l = await limit(other, id, { max_agents: 3 });
        assert.equal(l.statusCode, 404, `${id}: ${l.body}`);
        assert.equal((await disconnect(other, id)).statusCode, 404);
      }
      expectStatus(await limit(owner, 'cn_' + 'a'.repeat(80), { max_agents: 3 }), 422);
      assert.equal((await t.services.store.connections.byId(cid))?.status, 'active', 'nothing changed');
      expectStatus(await disconnect(owner, cid), 200);
      const ended = await limit(owner, cid, { max_agents: 3 });
      expectStatus(ended, 409);
      expectStatus(await t.app.inject({ url: '/api/connections' }), 401);
      expectStatus(await disconnect({ auth: {} }, cid), 401);
    });

    it('disconnect: the connection ends and every agent of it stops everywhere (one transaction); it stays ended; consent again makes a new one', async () => {
      const { owner, cid, agents: [a0, a1], passes: [p0] } = await setUp(2) as { owner: Owner; cid: string; agents: TestAgent[]; passes: string[] };
      if (!a0 || !a1 || !p0) throw new Error('set up');
      const txn = await accessRequest(t, a0, { site: 'other.example', scopes: ['list'] });
      const sid = await signedInAtSite(t, a0);
      expectStatus(await t.app.inject({ method: 'DELETE', url: `/api/agents/${a1.id}`, headers: owner.auth }), 200);
      const revSeq = await t.services.store.counters.current('rev_seq');

      const res = await disconnect(owner, cid);
      expectStatus(res, 200);
      assert.deepEqual(json(res), { ok: true });
      const [shown] = await list(owner);
      assert.equal(shown?.status, 'removed');
      assert.deepEqual(shown?.agents.map((a) => a.status), ['removed', 'removed']);
      assert.ok((await t.services.store.counters.current('rev_seq')) > revSeq);
      assert.deepEqual(await standing(t, a0, p0), { cloud: 'agent_revoked', local: 'agent_revoked', token: 403, flag: 'revoked' });
      assert.ok((await snapshot(t)).revoked_agents.some((e) => e.id === a0.id), 'the revocation list names it');
      assert.equal((await t.services.store.authzRequests.byId(txn))?.status, 'denied', 'its open request was ended');
      assert.equal(await logoutQueued(t, sid), true, 'back-channel logout queued');
      assert.deepEqual((await t.services.store.grants.listForAgent(a0.id)).map((g) => g.status), ['revoked']);
      const trail = JSON.stringify(json(await t.app.inject({ url: '/api/activity', headers: owner.auth })));
      assert.match(trail, /operator\.connection_ended/);
      assert.match(trail, /owner_disconnected/);

      expectStatus(await disconnect(owner, cid), 200);
      assert.equal((await t.services.store.connections.byId(cid))?.status, 'removed', 'stays ended');
      const created = await t.app.inject({ method: 'POST', url: '/api/v1/operator/agents', headers: op.auth, payload: { connection_id: cid, name: 'Late', jwk: a0.publicJwk } });
      expectStatus(created, 403);
      const again = await connect(t, op, owner);
      assert.notEqual(again.connectionId, cid, 'a new connection');
      assert.deepEqual((await list(owner)).map((c) => [c.id, c.status]), [[again.connectionId, 'active'], [cid, 'removed']], 'newest first');
    });
  });
}
