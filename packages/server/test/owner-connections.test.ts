import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { expectStatus, json, type TestApp, testApp } from './helpers/app.ts';
import { ownerWithPasskey } from './helpers/approvals.ts';
import { type ActiveOperator, activeOperator, connect, operatorAgent } from './helpers/operators.ts';

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
    });
  });
}
