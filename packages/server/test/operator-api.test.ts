import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateAgentKeyPair } from '@mandate/protocol';
import type { LightMyRequestResponse } from 'fastify';
import { expectStatus, json, type TestApp, testApp } from './helpers/app.ts';
import { type Owner, accessRequest, ownerWithPasskey } from './helpers/approvals.ts';
import { createAgent, createGrant, type TestAgent } from './helpers/agents.ts';
import { getPass } from './helpers/passes.ts';
import { type ActiveOperator, activeOperator, basic, connect, operatorAgent, pkce } from './helpers/operators.ts';
import { logoutQueued, signedInAtSite, snapshot, standing } from './helpers/operator-effects.ts';

interface AgentJson { agent_id: string; name: string; browser: string; connection_id: string; status: string; created_at: string }
interface ConnectionJson { connection_id: string; sub: string; max_agents: number; status: string; created_at: string; agents: number }

/**
 * The operator API (decisions §17) on SQLite and PostgreSQL: agents made for the people who
 * connected the operator, within each connection's limit (exact under racing calls), lists of its own
 * agents and connections only, removal and the end of a connection with every effect of a removal.
 */
for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`operator API (${backend})`, () => {
    let t: TestApp;
    let op: ActiveOperator;
    let other: ActiveOperator;
    before(async () => {
      t = await testApp({ backend });
      op = await activeOperator(t, { name: 'Acme' });
      other = await activeOperator(t, { name: 'Rival', redirectUris: ['https://rival.example/cb'], browser: 'user' });
    });
    after(() => t.close());

    const send = (o: { auth: Record<string, string> }, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown): Promise<LightMyRequestResponse> =>
      t.app.inject({ method, url, headers: { ...o.auth, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) }, ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }) });
    const create = async (o: ActiveOperator, connectionId: string, name = 'Helper') => send(o, 'POST', '/api/v1/operator/agents', { connection_id: connectionId, name, jwk: (await generateAgentKeyPair()).publicJwk });
    const agents = async (o: ActiveOperator, query = '') => {
      const res = await send(o, 'GET', `/api/v1/operator/agents${query}`);
      expectStatus(res, 200);
      return json<AgentJson[]>(res);
    };
    const connections = async (o: ActiveOperator) => {
      const res = await send(o, 'GET', '/api/v1/operator/connections');
      expectStatus(res, 200);
      return json<ConnectionJson[]>(res);
    };
    const noPersonalData = (res: LightMyRequestResponse, owner: Owner) => {
      assert.ok(!res.body.includes(owner.email), 'no email');
      assert.ok(!res.body.includes(owner.user.id), 'no user id');
      assert.ok(!/"(email|phone|phone_number|user_id)"/.test(res.body), 'no email or phone fields');
    };

    it('creates an agent for the connection\'s person: "<name> (via <operator>)", its browser; the owner gets an agent_added notice and a trail record', async () => {
      const owner = await ownerWithPasskey(t);
      const { connectionId } = await connect(t, op, owner);
      const res = await create(op, connectionId, '  Booker ');
      expectStatus(res, 200);
      const body = json<{ agent_id: string; name: string; browser: string }>(res);
      assert.deepEqual(Object.keys(body).sort(), ['agent_id', 'browser', 'name']);
      assert.match(body.agent_id, /^ag_[a-z2-7]{26}$/);
      assert.equal(body.name, 'Booker (via Acme)');
      assert.equal(body.browser, 'operator');
      noPersonalData(res, owner);
      const stored = await t.services.store.agents.byId(body.agent_id);
      assert.equal(stored?.userId, owner.user.id, 'the person owns it');
      const inbox = json<{ items: { type: string; title: string; body: string }[] }>(await t.app.inject({ url: '/api/notifications', headers: owner.auth }));
      const notice = inbox.items.find((n) => n.type === 'agent_added');
      assert.ok(notice, 'agent_added in the inbox');
      assert.match(notice.title, /Booker \(via Acme\)/);
      assert.match(notice.body, /by Acme, an operator you connected/);
      const pushes = (await t.services.store.outbox.list({ limit: 1000 })).filter((m) => m.userId === owner.user.id && JSON.stringify(m.payload).includes('agent_added'));
      assert.ok(pushes.length > 0 || (await t.services.store.pushDevices.listForUser(owner.user.id)).length === 0, 'pushed to the devices it has');
      const trail = JSON.stringify(json(await t.app.inject({ url: '/api/activity', headers: owner.auth })));
      assert.match(trail, /agent\.created/);
      assert.ok(trail.includes(connectionId));
      // A user-browser operator's agents say so.
      const { connectionId: atRival } = await connect(t, other, owner);
      assert.equal(json<{ browser: string }>(await create(other, atRival)).browser, 'user');
    });

    it('403 for a connection that is not this operator\'s live one (unknown and another operator\'s alike), or ended; keys with private parts 400', async () => {
      const owner = await ownerWithPasskey(t);
      const { connectionId } = await connect(t, op, owner);
      const { connectionId: rivals } = await connect(t, other, owner);
      const unknown = await create(op, 'cn_unknownunknownunknown00');
      const foreign = await create(op, rivals);
      expectStatus(unknown, 403);
      expectStatus(foreign, 403);
      assert.equal(json<{ detail: string }>(unknown).detail, json<{ detail: string }>(foreign).detail, 'no probing of ids');
      expectStatus(await create(op, 'nonsense'), 403);
      const { publicJwk } = await generateAgentKeyPair();
      const priv = await send(op, 'POST', '/api/v1/operator/agents', { connection_id: connectionId, name: 'K', jwk: { ...publicJwk, d: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU' } });
      expectStatus(priv, 400);
      const rsa = await send(op, 'POST', '/api/v1/operator/agents', { connection_id: connectionId, name: 'K', jwk: { kty: 'RSA', n: 'x', e: 'AQAB' } });
      expectStatus(rsa, 400);
      const long = await create(op, connectionId, 'x'.repeat(95));
      expectStatus(long, 400);
      assert.match(json<{ detail: string }>(long).detail, /via Acme/);
      expectStatus(await send(op, 'DELETE', `/api/v1/operator/connections/${connectionId}`), 200);
      const ended = await create(op, connectionId);
      expectStatus(ended, 403);
      assert.match(json<{ detail: string }>(ended).detail, /ended/);
    });

    it('max_agents holds exactly under racing creations (8 at once with limit 5: exactly 5), counted per connection', async () => {
      const owner = await ownerWithPasskey(t);
      const { connectionId, maxAgents } = await connect(t, op, owner);
      assert.equal(maxAgents, 5);
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => create(op, connectionId, `Racer ${i}`)));
      const codes = results.map((r) => r.statusCode).sort();
      assert.deepEqual(codes, [200, 200, 200, 200, 200, 403, 403, 403], results.map((r) => r.body).join('\n'));
      assert.match(json<{ detail: string }>(results.find((r) => r.statusCode === 403) as LightMyRequestResponse).detail, /limit/);
      assert.equal(await t.services.store.connections.liveAgents(connectionId), 5);
      // Removing one frees a place; the person's own agents do not count against the operator.
      await createAgent(t, owner);
      const [first] = await agents(op, `?connection_id=${connectionId}`);
      expectStatus(await send(op, 'DELETE', `/api/v1/operator/agents/${first?.agent_id}`), 200);
      expectStatus(await create(op, connectionId), 200);
      expectStatus(await create(op, connectionId), 403);
    });

    it('lists only its own agents and connections, with statuses and counts; never the person\'s email, phone or other agents', async () => {
      const owner = await ownerWithPasskey(t);
      const { connectionId, sub } = await connect(t, op, owner);
      const { connectionId: rivals } = await connect(t, other, owner);
      const mine = json<{ agent_id: string }>(await create(op, connectionId, 'Mine'));
      const theirs = json<{ agent_id: string }>(await create(other, rivals, 'Theirs'));
      await createAgent(t, owner, 'Personal');
      const listed = await agents(op, `?connection_id=${connectionId}`);
      assert.deepEqual(listed.map((a) => [a.agent_id, a.name, a.status, a.connection_id, a.browser]), [[mine.agent_id, 'Mine (via Acme)', 'active', connectionId, 'operator']]);
      const all = await agents(op);
      assert.ok(all.some((a) => a.agent_id === mine.agent_id));
      assert.ok(!all.some((a) => a.agent_id === theirs.agent_id), 'never another operator\'s');
      assert.ok(all.every((a) => a.name.endsWith('(via Acme)')), 'never the person\'s own agents');
      expectStatus(await send(op, 'GET', `/api/v1/operator/agents?connection_id=${rivals}`), 404);
      expectStatus(await send(op, 'GET', '/api/v1/operator/agents?connection_id=cn_unknownunknownunknown00'), 404);
      const res = await send(op, 'GET', '/api/v1/operator/connections');
      noPersonalData(res, owner);
      const shown = json<ConnectionJson[]>(res).find((c) => c.connection_id === connectionId);
      assert.deepEqual(shown && { ...shown, created_at: undefined }, { connection_id: connectionId, sub, max_agents: 5, status: 'active', created_at: undefined, agents: 1 });
      assert.ok(!(await connections(op)).some((c) => c.connection_id === rivals), 'never another operator\'s connection');
      noPersonalData(await send(op, 'GET', '/api/v1/operator/agents'), owner);
      // Statuses: suspended by the person's limit; removed by the person.
      t.clock.advance(1000);
      const second = json<{ agent_id: string }>(await create(op, connectionId, 'Second'));
      expectStatus(await t.app.inject({ method: 'POST', url: `/api/connections/${connectionId}/limit`, headers: owner.auth, payload: { max_agents: 1 } }), 200);
      expectStatus(await t.app.inject({ method: 'DELETE', url: `/api/agents/${mine.agent_id}`, headers: owner.auth }), 200);
      const statuses = Object.fromEntries((await agents(op, `?connection_id=${connectionId}`)).map((a) => [a.agent_id, a.status]));
      assert.deepEqual(statuses, { [mine.agent_id]: 'removed', [second.agent_id]: 'suspended' });
    });

    it('DELETE an agent: only its own (another\'s, unknown, removed: 404); every effect of a removal', async () => {
      const owner = await ownerWithPasskey(t);
      const { connectionId } = await connect(t, op, owner);
      const agent = await operatorAgent(t, op, connectionId, owner, 'Doomed');
      await createGrant(t, agent);
      const pass = (await getPass(t, agent)).access_token;
      const txn = await accessRequest(t, agent, { site: 'other.example', scopes: ['list'] });
      const sid = await signedInAtSite(t, agent);
      const personal = await createAgent(t, owner);
      expectStatus(await send(other, 'DELETE', `/api/v1/operator/agents/${agent.id}`), 404);
      expectStatus(await send(op, 'DELETE', `/api/v1/operator/agents/${personal.id}`), 404);
      for (const id of ['ag_unknownunknownunknown00', 'nonsense']) expectStatus(await send(op, 'DELETE', `/api/v1/operator/agents/${id}`), 404);
      expectStatus(await send(op, 'DELETE', `/api/v1/operator/agents/${'a'.repeat(80)}`), 422);
      assert.equal((await t.services.store.agents.byId(agent.id))?.status, 'active', 'nothing happened');

      const res = await send(op, 'DELETE', `/api/v1/operator/agents/${agent.id}`);
      expectStatus(res, 200);
      assert.deepEqual(json(res), { ok: true });
      assert.deepEqual(await standing(t, agent, pass), { cloud: 'agent_revoked', local: 'agent_revoked', token: 403, flag: 'revoked' });
      assert.equal((await t.services.store.authzRequests.byId(txn))?.status, 'denied');
      assert.equal(await logoutQueued(t, sid), true);
      expectStatus(await send(op, 'DELETE', `/api/v1/operator/agents/${agent.id}`), 404);
      assert.equal((await t.services.store.agents.byId(personal.id))?.status, 'active');
      const trail = JSON.stringify(json(await t.app.inject({ url: '/api/activity', headers: owner.auth })));
      assert.match(trail, /agent\.removed/);
      assert.match(trail, /"by":"operator"/);
    });

    it('DELETE a connection: ends it and removes its agents in one go (cloud verify, snapshot, token, requests, logout); another\'s 404; stays ended', async () => {
      const owner = await ownerWithPasskey(t);
      const { connectionId } = await connect(t, op, owner);
      const made: TestAgent[] = [await operatorAgent(t, op, connectionId, owner, 'One'), await operatorAgent(t, op, connectionId, owner, 'Two')];
      const passes: string[] = [];
      for (const a of made) {
        await createGrant(t, a);
        passes.push((await getPass(t, a)).access_token);
      }
      const sid = await signedInAtSite(t, made[0] as TestAgent);
      const txn = await accessRequest(t, made[1] as TestAgent, { site: 'other.example', scopes: ['list'] });
      expectStatus(await send(other, 'DELETE', `/api/v1/operator/connections/${connectionId}`), 404);
      for (const id of ['cn_unknownunknownunknown00', 'x']) expectStatus(await send(op, 'DELETE', `/api/v1/operator/connections/${id}`), 404);
      const res = await send(op, 'DELETE', `/api/v1/operator/connections/${connectionId}`);
      expectStatus(res, 200);
      assert.deepEqual(json(res), { ok: true, status: 'removed' });
      for (const [i, a] of made.entries()) {
        assert.deepEqual(await standing(t, a, passes[i] as string), { cloud: 'agent_revoked', local: 'agent_revoked', token: 403, flag: 'revoked' });
      }
      const listed = (await snapshot(t)).revoked_agents.map((e) => e.id);
      assert.ok(made.every((a) => listed.includes(a.id)));
      assert.equal(await logoutQueued(t, sid), true);
      assert.equal((await t.services.store.authzRequests.byId(txn))?.status, 'denied');
      assert.equal((await connections(op)).find((c) => c.connection_id === connectionId)?.status, 'removed');
      expectStatus(await send(op, 'DELETE', `/api/v1/operator/connections/${connectionId}`), 200);
      const trail = JSON.stringify(json(await t.app.inject({ url: '/api/activity', headers: owner.auth })));
      assert.match(trail, /operator_ended/);
    });

    it('a reused code ends its connection and removes the agents made through it', async () => {
      const owner = await ownerWithPasskey(t);
      const { verifier, challenge } = pkce();
      const started = await t.app.inject({ method: 'POST', url: '/api/connect/start', headers: owner.auth, payload: { operator: op.id, redirect_uri: op.redirectUri, state: 's', code_challenge: challenge, code_challenge_method: 'S256' } });
      const { consent_id, options } = json<{ consent_id: string; options: unknown }>(started);
      const finished = await t.app.inject({ method: 'POST', url: '/api/connect/finish', headers: owner.auth, payload: { consent_id, assertion: owner.authenticator.assert(options as never) as unknown as Record<string, unknown> } });
      const code = new URL(json<{ redirect: string }>(finished).redirect).searchParams.get('code');
      const body = { code, code_verifier: verifier, redirect_uri: op.redirectUri };
      const first = await send(op, 'POST', '/api/v1/operator/token', body);
      expectStatus(first, 200);
      const cid = json<{ connection_id: string }>(first).connection_id;
      const agent = await operatorAgent(t, op, cid, owner, 'Copied');
      expectStatus(await send(op, 'POST', '/api/v1/operator/token', body), 400);
      assert.equal((await t.services.store.connections.byId(cid))?.status, 'removed');
      assert.equal((await t.services.store.agents.byId(agent.id))?.status, 'removed');
      assert.match(JSON.stringify(json(await t.app.inject({ url: '/api/activity', headers: owner.auth }))), /code_reused/);
    });

    it('the admin switch: off blocks (suspensions too), on unblocks and applies the connection limits again', async () => {
      const owner = await ownerWithPasskey(t);
      const { connectionId } = await connect(t, op, owner);
      const a = await operatorAgent(t, op, connectionId, owner, 'A');
      t.clock.advance(1000);
      const b = await operatorAgent(t, op, connectionId, owner, 'B');
      await t.services.operators.setEnabled(op.id, false);
      assert.equal((await t.services.store.agents.byId(b.id))?.status, 'blocked');
      const shown = json<{ status: string }[]>(await t.app.inject({ url: '/api/connections', headers: owner.auth }));
      assert.equal(shown[0]?.status, 'blocked', 'the person sees the operator is off');
      expectStatus(await t.app.inject({ method: 'POST', url: `/api/connections/${connectionId}/limit`, headers: owner.auth, payload: { max_agents: 1 } }), 200);
      assert.equal((await t.services.store.agents.byId(b.id))?.status, 'blocked', 'blocked stays blocked while off');
      await t.services.operators.setEnabled(op.id, true);
      assert.equal((await t.services.store.agents.byId(a.id))?.status, 'active');
      assert.equal((await t.services.store.agents.byId(b.id))?.status, 'suspended', 'beyond the limit: suspended at on');
      expectStatus(await t.app.inject({ method: 'POST', url: `/api/connections/${connectionId}/limit`, headers: owner.auth, payload: { max_agents: 2 } }), 200);
      await t.services.operators.setEnabled(op.id, false);
      expectStatus(await t.app.inject({ method: 'POST', url: `/api/connections/${connectionId}/limit`, headers: owner.auth, payload: { max_agents: 1 } }), 200);
      expectStatus(await t.app.inject({ method: 'POST', url: `/api/connections/${connectionId}/limit`, headers: owner.auth, payload: { max_agents: 5 } }), 200);
      assert.equal((await t.services.store.agents.byId(b.id))?.status, 'blocked', 'raising the limit never lifts an operator\'s block');
      await t.services.operators.setEnabled(op.id, true);
      assert.equal((await t.services.store.agents.byId(b.id))?.status, 'active');
    });

    it('bad input of every shape on every operator route: a 4xx with detail, never a 5xx; Basic of the wrong kind 401', async () => {
      const owner = await ownerWithPasskey(t);
      const { connectionId } = await connect(t, op, owner);
      const { publicJwk } = await generateAgentKeyPair();
      const bodies: unknown[] = [undefined, null, 'x', 1, [], {}, { connection_id: connectionId }, { connection_id: connectionId, name: 'x' }, { connection_id: connectionId, jwk: publicJwk },
        { connection_id: 1, name: 'x', jwk: publicJwk }, { connection_id: connectionId, name: '', jwk: publicJwk }, { connection_id: connectionId, name: 'x'.repeat(101), jwk: publicJwk },
        { connection_id: connectionId, name: 'a\u202eb', jwk: publicJwk }, { connection_id: connectionId, name: 'x', jwk: 'key' }, { connection_id: connectionId, name: 'x', jwk: null },
        { connection_id: connectionId, name: 'x', jwk: {} }, { connection_id: connectionId, name: 'x', jwk: { ...publicJwk, x: 'AAAA' } }, { connection_id: connectionId, name: 'x', jwk: publicJwk, extra: 1 },
        { connection_id: 'c'.repeat(65), name: 'x', jwk: publicJwk }];
      for (const b of bodies) {
        const res = await t.app.inject({ method: 'POST', url: '/api/v1/operator/agents', headers: { ...op.auth, 'content-type': 'application/json' }, payload: b === undefined ? '' : JSON.stringify(b) });
        assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${JSON.stringify(b)}: ${res.statusCode} ${res.body}`);
        assert.ok(json<{ detail: unknown }>(res).detail, `${JSON.stringify(b)}: detail`);
      }
      const raw = await t.app.inject({ method: 'POST', url: '/api/v1/operator/agents', headers: { ...op.auth, 'content-type': 'application/json' }, payload: '{"connection_id":' });
      expectStatus(raw, 422);
      for (const url of ['/api/v1/operator/agents?connection_id=' + 'c'.repeat(65), '/api/v1/operator/agents?connection_id=x&extra=1', '/api/v1/operator/agents?connection_id=%00']) {
        const res = await send(op, 'GET', url);
        assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${url}: ${res.statusCode} ${res.body}`);
      }
      for (const [method, url] of [['GET', '/api/v1/operator/agents'], ['GET', '/api/v1/operator/connections'], ['DELETE', `/api/v1/operator/connections/${connectionId}`], ['DELETE', '/api/v1/operator/agents/ag_x'], ['POST', '/api/v1/operator/agents']] as const) {
        for (const auth of [{}, owner.auth, basic(op.id, 'wrong'), basic(other.id, op.secret), { authorization: 'Basic !!!' }]) {
          const res = await t.app.inject({ method, url, headers: { ...auth, 'content-type': 'application/json' }, ...(method === 'POST' ? { payload: JSON.stringify({ connection_id: connectionId, name: 'x', jwk: publicJwk }) } : {}) });
          assert.equal(res.statusCode, 401, `${method} ${url}: ${res.statusCode}`);
          assert.match(String(res.headers['www-authenticate']), /^Basic/);
        }
      }
      const pending = await activeOperator(t, { status: 'pending' });
      expectStatus(await send(pending, 'GET', '/api/v1/operator/agents'), 403);
      assert.equal((await t.services.store.connections.byId(connectionId))?.status, 'active', 'nothing ended');
    });
  });
}
