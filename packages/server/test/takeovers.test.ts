import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { testApp, signUp, json, expectStatus, type TestApp } from './helpers/app.ts';
import { createAgent, type TestAgent } from './helpers/agents.ts';
import { housekeepingRound } from '../src/domain/housekeeping.ts';

interface Opened { takeover_id: string; agent_token: string; expires_in: number }

/** Take-over sessions and reports over HTTP (decisions §21), on SQLite and PostgreSQL. */
for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`take-overs (${backend})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp({ backend });
    });
    after(() => t.close());

    const ask = async (agent: TestAgent, over: Record<string, unknown> = {}) =>
      t.app.inject({ method: 'POST', url: '/api/v1/takeover', payload: { agent_id: agent.id, agent_jwt: await agent.jwt(), url: 'https://shop.example/checkout', reason: 'a captcha', ...over } });

    it('opens one session per agent (409 for a second), pushes a card, lists it as active; the token is stored hashed', async () => {
      const agent = await createAgent(t);
      const res = await ask(agent);
      expectStatus(res, 200);
      const body = json<Opened>(res);
      assert.match(body.takeover_id, /^tk_[a-z2-7]{26}$/);
      assert.equal(body.expires_in, 600);
      assert.ok(body.agent_token.length >= 40);
      const row = await t.services.store.takeovers.byId(body.takeover_id);
      assert.equal(row?.state, 'open');
      assert.notEqual(row?.tokenHash, body.agent_token);
      assert.ok(!JSON.stringify(row).includes(body.agent_token), 'the token itself is not stored');

      const again = await ask(agent);
      expectStatus(again, 409);
      assert.match(json<{ detail: string }>(again).detail, /already has an open take-over/);

      const active = json<{ id: string; agent_id: string; url: string; reason: string }[]>(await t.app.inject({ url: '/api/takeover/active', headers: agent.owner.auth }));
      assert.deepEqual(active.map((a) => [a.id, a.agent_id, a.url, a.reason]), [[body.takeover_id, agent.id, 'https://shop.example/checkout', 'a captcha']]);
      const other = await signUp(t.app);
      assert.deepEqual(json(await t.app.inject({ url: '/api/takeover/active', headers: other.auth })), []);

      const inbox = json<{ items?: unknown[] } | unknown[]>(await t.app.inject({ url: '/api/notifications', headers: agent.owner.auth }));
      assert.ok(JSON.stringify(inbox).includes(body.takeover_id), 'the owner has a take-over card');
      const activity = JSON.stringify(json(await t.app.inject({ url: '/api/activity', headers: agent.owner.auth })));
      assert.ok(activity.includes('takeover.requested'));
    });

    it('cancel: owner only (another owner 404), once; then the agent may ask again', async () => {
      const agent = await createAgent(t);
      const { takeover_id } = json<Opened>(await ask(agent));
      const other = await signUp(t.app);
      expectStatus(await t.app.inject({ method: 'POST', url: `/api/takeover/${takeover_id}/cancel`, headers: other.auth }), 404);
      expectStatus(await t.app.inject({ method: 'POST', url: `/api/takeover/${takeover_id}/cancel` }), 401);
      expectStatus(await t.app.inject({ method: 'POST', url: `/api/takeover/${takeover_id}/cancel`, headers: agent.owner.auth }), 200);
      expectStatus(await t.app.inject({ method: 'POST', url: `/api/takeover/${takeover_id}/cancel`, headers: agent.owner.auth }), 404);
      expectStatus(await t.app.inject({ method: 'POST', url: '/api/takeover/tk_nope/cancel', headers: agent.owner.auth }), 404);
      assert.equal((await t.services.store.takeovers.byId(takeover_id))?.state, 'cancelled');
      const activity = JSON.stringify(json(await t.app.inject({ url: '/api/activity', headers: agent.owner.auth })));
      assert.ok(activity.includes('takeover.ended') && activity.includes('cancelled'));
      expectStatus(await ask(agent), 200);
    });

    it('ends after 600 s (fixed clock): no longer active, and the agent may ask again', async () => {
      const agent = await createAgent(t);
      const { takeover_id } = json<Opened>(await ask(agent));
      t.clock.advance(599_000);
      assert.equal(json<unknown[]>(await t.app.inject({ url: '/api/takeover/active', headers: agent.owner.auth })).length, 1);
      expectStatus(await ask(agent), 409);
      t.clock.advance(1_000);
      assert.equal(json<unknown[]>(await t.app.inject({ url: '/api/takeover/active', headers: agent.owner.auth })).length, 0);
      expectStatus(await t.app.inject({ method: 'POST', url: `/api/takeover/${takeover_id}/cancel`, headers: agent.owner.auth }), 404);
      expectStatus(await ask(agent), 200);
      assert.equal((await t.services.store.takeovers.byId(takeover_id))?.state, 'expired');
    });

    it('one that runs out with nobody connected is ended by housekeeping, with its Activity record', async () => {
      const agent = await createAgent(t);
      const { takeover_id } = json<Opened>(await ask(agent));
      t.clock.advance(600_000);
      const swept = await housekeepingRound(t.services.store, t.clock, `node-${takeover_id}`, 3_600_000, { takeoversExpired: () => t.services.takeovers.expireDue() });
      assert.ok(swept && swept['takeoversExpired']! >= 1, JSON.stringify(swept));
      assert.equal((await t.services.store.takeovers.byId(takeover_id))?.state, 'expired');
      const ended = await t.services.store.activity.list(agent.owner.user.id, { before: 0, limit: 10, action: 'takeover.ended' });
      assert.deepEqual(ended.map((a) => a.detail['state']), ['expired']);
      await t.services.store.leases.release('housekeeping', `node-${takeover_id}`);
    });

    it('refuses bad input: bad JWT 401, a reason over 200, a non-http url', async () => {
      const agent = await createAgent(t);
      expectStatus(await ask(agent, { agent_jwt: 'x.y.z' }), 401);
      expectStatus(await ask(agent, { reason: 'r'.repeat(201) }), 422);
      expectStatus(await ask(agent, { url: 'javascript:alert(1)' }), 422);
      expectStatus(await ask(agent, { reason: 'bad\u202Etext' }), 422);
    });

    it('reports: POST answers an id; the owner lists them newest first; other owners see none', async () => {
      const agent = await createAgent(t);
      const report = async (kind: string, extra: Record<string, unknown> = {}) =>
        t.app.inject({ method: 'POST', url: '/api/v1/takeover/report', payload: { agent_id: agent.id, agent_jwt: await agent.jwt(), site: 'shop.example', kind, ...extra } });
      const first = await report('shadow_dom', { detail: 'closed shadow root on the card form', url: 'https://shop.example/pay' });
      expectStatus(first, 200);
      t.clock.advance(1000);
      const second = await report('bot_detection');
      const ids = [json<{ id: string }>(second).id, json<{ id: string }>(first).id];
      const list = json<{ id: string; kind: string; detail: string | null }[]>(await t.app.inject({ url: '/api/v1/takeover/reports', headers: agent.owner.auth }));
      assert.deepEqual(list.map((r) => r.id), ids);
      assert.equal(list[1]!.detail, 'closed shadow root on the card form');
      expectStatus(await report('nonsense'), 422);
      expectStatus(await report('other', { detail: 'd'.repeat(281) }), 422);
      expectStatus(await t.app.inject({ url: '/api/v1/takeover/reports' }), 401);
      const other = await signUp(t.app);
      assert.deepEqual(json(await t.app.inject({ url: '/api/v1/takeover/reports', headers: other.auth })), []);
    });
  });
}
