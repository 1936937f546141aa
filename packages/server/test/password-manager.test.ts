import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { OperatorBrowser } from '../src/store/ports/index.ts';
import { expectStatus, json, signUp, testApp, type TestApp } from './helpers/app.ts';
import { createAgent, type Owner, type TestAgent } from './helpers/agents.ts';
import { verifyEmail } from './helpers/email-links.ts';

interface SelfStatus { agent_id: string; global_flag: string; password_manager: string }
interface ActivityPage { items: { action: string; agent_id: string | null; detail: Record<string, unknown> }[] }

/**
 * The password-manager switch (issue 24 item 8, decisions §17): `POST /api/agents/{id}/password-manager`
 * `{enabled}` for agents whose browser runs on their operator's computers, owner only; the agent reads
 * `password_manager` in `GET /api/v1/agent-status` (off until the owner turns it on). Agents are tied
 * to an active operator in the store, as the operator API (to come) will create them.
 */
for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`password-manager switch (${backend})`, () => {
    let t: TestApp;
    let operatorId: string;
    let operatorSecret: string;
    before(async () => {
      t = await testApp({ backend, env: { ADMIN_EMAILS: 'root@example.com' } });
      const admin = await signUp(t.app, 'root@example.com');
      await verifyEmail(t, admin);
      const registrant = await signUp(t.app);
      const res = await t.app.inject({ method: 'POST', url: '/api/operators', headers: registrant.auth, payload: { name: 'Acme agents', redirect_uris: ['https://acme.example/cb'], browser: 'operator' } });
      expectStatus(res, 200);
      ({ id: operatorId, secret: operatorSecret } = json<{ id: string; secret: string }>(res));
      // The domain check itself is tested in operators.test.ts against a stand-in site.
      await t.services.store.operators.markVerified(operatorId, t.clock.now());
      expectStatus(await t.app.inject({ method: 'POST', url: `/api/admin/operators/${operatorId}/status`, headers: admin.auth, payload: { enabled: true } }), 200);
    });
    after(() => t.close());

    async function operatorAgent(browser: OperatorBrowser, owner?: Owner): Promise<TestAgent> {
      const agent = await createAgent(t, owner);
      await t.services.store.operators.attachAgent(agent.id, { operatorId, connectionId: 'cn_test', browser });
      return agent;
    }
    const switchIt = (headers: Record<string, string>, agentId: string, payload: unknown) =>
      t.app.inject({ method: 'POST', url: `/api/agents/${agentId}/password-manager`, headers, payload: payload as Record<string, unknown> });
    async function listed(agent: TestAgent): Promise<string | undefined> {
      const res = await t.app.inject({ url: '/api/agents', headers: agent.owner.auth });
      expectStatus(res, 200);
      return json<{ id: string; password_manager: string }[]>(res).find((a) => a.id === agent.id)?.password_manager;
    }
    async function selfStatus(agent: TestAgent): Promise<SelfStatus> {
      const res = await t.app.inject({ url: `/api/v1/agent-status?agent_id=${agent.id}`, headers: { 'x-agent-jwt': await agent.jwt() } });
      expectStatus(res, 200);
      return json<SelfStatus>(res);
    }

    it('an operator-browser agent starts off; its owner turns it on and off again, and the agent status and the owner\'s list follow', async () => {
      const agent = await operatorAgent('operator');
      assert.equal((await selfStatus(agent)).password_manager, 'off');
      assert.equal(await listed(agent), 'off');

      const on = await switchIt(agent.owner.auth, agent.id, { enabled: true });
      expectStatus(on, 200);
      assert.deepEqual(json(on), { agent_id: agent.id, password_manager: 'on' });
      assert.equal((await selfStatus(agent)).password_manager, 'on');
      assert.equal(await listed(agent), 'on');
      const flagged = await t.app.inject({ method: 'POST', url: `/api/agents/${agent.id}/flag`, headers: agent.owner.auth, payload: { flag: 'suspicious' } });
      expectStatus(flagged, 200);
      assert.equal(json<{ password_manager: string }>(flagged).password_manager, 'on', 'the flag answer says it too');

      const off = await switchIt(agent.owner.auth, agent.id, { enabled: false });
      expectStatus(off, 200);
      assert.deepEqual(json(off), { agent_id: agent.id, password_manager: 'off' });
      assert.equal((await selfStatus(agent)).password_manager, 'off');
    });

    it('each switch leaves an agent.password_manager record in the owner\'s Activity', async () => {
      const agent = await operatorAgent('operator');
      expectStatus(await switchIt(agent.owner.auth, agent.id, { enabled: true }), 200);
      expectStatus(await switchIt(agent.owner.auth, agent.id, { enabled: false }), 200);
      const res = await t.app.inject({ url: '/api/activity?action=agent.password_manager', headers: agent.owner.auth });
      expectStatus(res, 200);
      assert.deepEqual(json<ActivityPage>(res).items.map((i) => [i.action, i.agent_id, i.detail]), [
        ['agent.password_manager', agent.id, { enabled: false }],
        ['agent.password_manager', agent.id, { enabled: true }],
      ]);
    });

    it('ordinary agents and agents whose browser runs on the owner\'s machine: not_applicable, and the switch answers 400 naming why', async () => {
      const ordinary = await createAgent(t);
      const userBrowser = await operatorAgent('user');
      for (const agent of [ordinary, userBrowser]) {
        assert.equal((await selfStatus(agent)).password_manager, 'not_applicable');
        assert.equal(await listed(agent), 'not_applicable');
        const res = await switchIt(agent.owner.auth, agent.id, { enabled: true });
        expectStatus(res, 400);
        assert.match(json<{ detail: string }>(res).detail, /only for agents whose browser runs on their operator's computers/);
        assert.equal((await selfStatus(agent)).password_manager, 'not_applicable', 'nothing changed');
      }
    });

    it('sites are not told: the public agent status has no password_manager', async () => {
      const agent = await operatorAgent('operator');
      const res = await t.app.inject({ url: `/api/v1/agents/${agent.id}/status` });
      expectStatus(res, 200);
      assert.equal('password_manager' in json(res), false);
    });

    it('owner only: signed out, agent credentials and operator credentials 401; another owner\'s, a removed or an unknown agent 404', async () => {
      const agent = await operatorAgent('operator');
      const jwt = await agent.jwt();
      assert.ok(await t.services.operators.authenticate(operatorId, operatorSecret), 'the operator credentials are good ones');
      const basic = `Basic ${Buffer.from(`${operatorId}:${operatorSecret}`).toString('base64')}`;
      const credentials: Record<string, string>[] = [{}, { authorization: `Bearer ${jwt}` }, { 'x-agent-jwt': jwt }, { authorization: basic }];
      for (const headers of credentials) {
        expectStatus(await switchIt(headers, agent.id, { enabled: true }), 401);
      }
      const other = await signUp(t.app);
      expectStatus(await switchIt(other.auth, agent.id, { enabled: true }), 404);
      expectStatus(await switchIt(agent.owner.auth, 'ag_missing', { enabled: true }), 404);
      assert.equal((await selfStatus(agent)).password_manager, 'off', 'none of them switched it on');

      const removed = await operatorAgent('operator', agent.owner);
      expectStatus(await t.app.inject({ method: 'DELETE', url: `/api/agents/${removed.id}`, headers: agent.owner.auth }), 200);
      expectStatus(await switchIt(agent.owner.auth, removed.id, { enabled: true }), 404);
    });

    it('bad bodies: 4xx with a clear message, never a 5xx', async () => {
      const agent = await operatorAgent('operator');
      for (const body of [undefined, null, {}, { enabled: 'yes' }, { enabled: 1 }, { enabled: true, extra: 1 }, [true], 'true']) {
        const res = await switchIt(agent.owner.auth, agent.id, body);
        assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${JSON.stringify(body)}: ${res.statusCode} ${res.body}`);
        const { detail } = json<{ detail?: unknown }>(res);
        assert.ok(typeof detail === 'string' ? detail.length > 0 : Array.isArray(detail) && detail.length > 0, `a message saying what is wrong: ${res.body}`);
      }
      expectStatus(await switchIt(agent.owner.auth, 'ag_' + 'a'.repeat(70), { enabled: true }), 422);
      assert.equal((await selfStatus(agent)).password_manager, 'off');
    });
  });
}
