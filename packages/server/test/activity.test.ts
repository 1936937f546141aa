import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { testApp, signUp, json, type TestApp } from './helpers/app.ts';
import { agentJwt, createAgent, type Owner, type TestAgent } from './helpers/agents.ts';

interface Item {
  seq: number;
  action: string;
  agent_id: string | null;
  agent_name: string | null;
  site: string | null;
  detail: Record<string, unknown>;
  created_at: string;
}
interface Page {
  items: Item[];
  next_before: number | null;
}

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`GET /api/activity (${backend})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp({ backend });
    });
    after(() => t.close());

    const page = async (owner: Owner, query = '') => {
      const res = await t.app.inject({ url: `/api/activity${query}`, headers: owner.auth });
      assert.equal(res.statusCode, 200, res.body);
      return json<Page>(res);
    };
    const note = async (agent: TestAgent, text: string) => {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/agent-notify', payload: { agent_id: agent.id, agent_jwt: await agentJwt(t, agent), text } });
      assert.equal(res.statusCode, 200, res.body);
    };
    const status = async (agent: TestAgent, site: string, text: string) => {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/agent-status', payload: { agent_id: agent.id, agent_jwt: await agentJwt(t, agent), status: text, site } });
      assert.equal(res.statusCode, 200, res.body);
    };

    it('names the agent of each record, also after the agent was removed', async () => {
      const owner = await signUp(t.app);
      const agent = await createAgent(t, owner, 'Named Bot');
      await note(agent, 'hello');
      const removed = await t.app.inject({ method: 'DELETE', url: `/api/agents/${agent.id}`, headers: owner.auth });
      assert.equal(removed.statusCode, 200);
      const items = (await page(owner)).items.filter((i) => i.agent_id === agent.id);
      assert.ok(items.length >= 3, 'created, note, removed');
      for (const item of items) assert.equal(item.agent_name, 'Named Bot');
    });

    it('records agent creation, flag changes and removal', async () => {
      const owner = await signUp(t.app);
      const agent = await createAgent(t, owner, 'Scout');
      await t.app.inject({ method: 'POST', url: `/api/agents/${agent.id}/flag`, headers: owner.auth, payload: { flag: 'suspicious' } });
      t.clock.advance(5000);
      await t.app.inject({ method: 'DELETE', url: `/api/agents/${agent.id}`, headers: owner.auth });
      const { items, next_before } = await page(owner);
      assert.deepEqual(items.map((i) => [i.action, i.agent_id]), [['agent.removed', agent.id], ['agent.flagged', agent.id], ['agent.created', agent.id]]);
      assert.deepEqual(items[1]?.detail, { flag: 'suspicious' });
      assert.deepEqual(items[2]?.detail, { name: 'Scout' });
      assert.equal(items[0]?.created_at, new Date(t.clock.now()).toISOString());
      assert.equal(items[2]?.created_at, new Date(t.clock.now() - 5000).toISOString());
      assert.equal(next_before, null);
    });

    it('pages newest first by sequence number with before and limit', async () => {
      const owner = await signUp(t.app);
      const agent = await createAgent(t, owner);
      for (let i = 1; i <= 6; i++) await note(agent, `note ${i}`);
      // 7 records: agent.created + 6 notes.
      const all = await page(owner);
      assert.equal(all.items.length, 7);
      const seqs = all.items.map((i) => i.seq);
      assert.deepEqual(seqs, [...seqs].sort((a, b) => b - a));
      assert.equal(all.next_before, null);

      const p1 = await page(owner, '?limit=3');
      assert.deepEqual(p1.items.map((i) => i.detail.text), ['note 6', 'note 5', 'note 4']);
      assert.equal(p1.next_before, p1.items[2]?.seq);
      const p2 = await page(owner, `?limit=3&before=${p1.next_before}`);
      assert.deepEqual(p2.items.map((i) => i.detail.text), ['note 3', 'note 2', 'note 1']);
      assert.equal(p2.next_before, p2.items[2]?.seq);
      const p3 = await page(owner, `?limit=3&before=${p2.next_before}`);
      assert.deepEqual(p3.items.map((i) => i.action), ['agent.created']);
      assert.equal(p3.next_before, null);
      // A page that ends exactly at the last record says so.
      const exact = await page(owner, `?limit=6&before=${p1.items[0]?.seq}`);
      assert.equal(exact.items.length, 6);
      assert.equal(exact.next_before, null);
      assert.deepEqual((await page(owner, `?before=${seqs[seqs.length - 1]}`)).items, []);
    });

    it('defaults to 50 items and allows at most 200', async () => {
      const owner = await signUp(t.app);
      const agent = await createAgent(t, owner);
      for (let i = 0; i < 29; i++) await note(agent, `n${i}`);
      t.clock.advance(60_000);
      for (let i = 0; i < 29; i++) await note(agent, `m${i}`);
      const first = await page(owner);
      assert.equal(first.items.length, 50);
      assert.equal(first.next_before, first.items[49]?.seq);
      assert.equal((await page(owner, '?limit=200')).items.length, 59);
    });

    it('filters by agent, site and action, alone and together', async () => {
      const owner = await signUp(t.app);
      const a = await createAgent(t, owner, 'A');
      const b = await createAgent(t, owner, 'B');
      await status(a, 'shop.example', 'a at shop');
      await status(a, 'news.example', 'a at news');
      await status(b, 'shop.example', 'b at shop');
      await note(b, 'b note');
      const byAgent = await page(owner, `?agent=${b.id}`);
      assert.deepEqual(byAgent.items.map((i) => i.action), ['agent.note', 'agent.status', 'agent.created']);
      assert.ok(byAgent.items.every((i) => i.agent_id === b.id));
      const bySite = await page(owner, '?site=shop.example');
      assert.deepEqual(bySite.items.map((i) => i.detail.status), ['b at shop', 'a at shop']);
      const byAction = await page(owner, '?action=agent.created');
      assert.deepEqual(byAction.items.map((i) => i.detail.name), ['B', 'A']);
      const combined = await page(owner, `?agent=${a.id}&site=shop.example&action=agent.status`);
      assert.deepEqual(combined.items.map((i) => i.detail.status), ['a at shop']);
      assert.deepEqual((await page(owner, '?action=agent.nothing')).items, []);
      assert.equal((await page(owner, '?agent=&site=&action=')).items.length, 6);
      // Filters and paging combine.
      const f1 = await page(owner, `?agent=${a.id}&limit=1`);
      const f2 = await page(owner, `?agent=${a.id}&limit=1&before=${f1.next_before}`);
      assert.deepEqual([f1.items[0]?.detail.status, f2.items[0]?.detail.status], ['a at news', 'a at shop']);
    });

    it('shows only the caller\'s own trail', async () => {
      const owner = await signUp(t.app);
      const other = await signUp(t.app);
      const agent = await createAgent(t, owner);
      await note(agent, 'private');
      assert.deepEqual((await page(other)).items, []);
      assert.deepEqual((await page(other, `?agent=${agent.id}`)).items, []);
    });

    it('401 without a session; 422 for bad paging values', async () => {
      const owner = await signUp(t.app);
      assert.equal((await t.app.inject({ url: '/api/activity' })).statusCode, 401);
      for (const q of ['limit=0', 'limit=201', 'limit=abc', 'before=-1', 'before=1.5', `agent=${'a'.repeat(65)}`]) {
        const res = await t.app.inject({ url: `/api/activity?${q}`, headers: owner.auth });
        assert.equal(res.statusCode, 422, q);
        assert.equal(json<{ detail: { loc: string[] }[] }>(res).detail[0]?.loc[0], 'query');
      }
    });
  });
}
