import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createAgentJwt, generateAgentKeyPair } from '@mandate/protocol';
import { seconds } from '../src/clock.ts';
import { testApp, signUp, json, type TestApp } from './helpers/app.ts';
import { agentJwt, createAgent, createGrant, revokeGrant } from './helpers/agents.ts';

interface Status {
  agent_id: string;
  global_flag: string;
  revoked_sites: string[];
  jwks_url: string;
}

describe('agent status, status reports and notes', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp();
  });
  after(() => t.close());

  describe('GET /api/v1/agents/{agent_id}/status', () => {
    it('answers the status object; unknown or malformed ids 404', async () => {
      const owner = await signUp(t.app);
      const agent = await createAgent(t, owner);
      const res = await t.app.inject({ url: `/api/v1/agents/${agent.id}/status` });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(json<Status>(res), { agent_id: agent.id, global_flag: 'ok', revoked_sites: [], jwks_url: 'http://localhost:8080/api/v1/jwks' });
      for (const id of ['ag_aaaaaaaaaaaaaaaaaaaaaaaaaa', 'nope', 'u_abc']) {
        const r = await t.app.inject({ url: `/api/v1/agents/${id}/status` });
        assert.equal(r.statusCode, 404, id);
        assert.equal(json<{ detail: string }>(r).detail, 'agent not found');
      }
    });

    it('reads suspicious and revoked flags, and lists each revoked site once, sorted', async () => {
      const owner = await signUp(t.app);
      const agent = await createAgent(t, owner);
      await t.app.inject({ method: 'POST', url: `/api/agents/${agent.id}/flag`, headers: owner.auth, payload: { flag: 'suspicious' } });
      assert.equal(json<Status>(await t.app.inject({ url: `/api/v1/agents/${agent.id}/status` })).global_flag, 'suspicious');
      for (const site of ['b.example', 'a.example']) await revokeGrant(t, (await createGrant(t, agent, { site })).id);
      await revokeGrant(t, (await createGrant(t, agent, { site: 'a.example' })).id);
      await createGrant(t, agent, { site: 'c.example' });
      await t.app.inject({ method: 'POST', url: `/api/agents/${agent.id}/flag`, headers: owner.auth, payload: { flag: 'revoked' } });
      const status = json<Status>(await t.app.inject({ url: `/api/v1/agents/${agent.id}/status` }));
      assert.equal(status.global_flag, 'revoked');
      assert.ok(status.revoked_sites.includes('a.example') && status.revoked_sites.includes('b.example'));
      assert.deepEqual(status.revoked_sites, [...new Set(status.revoked_sites)].sort());
    });
  });

  it('answers 422 for ids longer than 64 characters on every route with an agent id in the path', async () => {
    const owner = await signUp(t.app);
    const long = `ag_${'a'.repeat(70)}`;
    for (const url of [`/api/v1/agents/${long}/status`, `/api/v1/agents/${long}/reputation`, `/api/agents/${long}/statuses`]) {
      const res = await t.app.inject({ url, headers: owner.auth });
      assert.equal(res.statusCode, 422, url);
      assert.deepEqual(json<{ detail: { loc: string[] }[] }>(res).detail[0]?.loc, ['path', 'agent_id']);
    }
  });

  describe('GET /api/v1/agent-status', () => {
    it('answers the same object for the agent itself, with its password-manager state (password-manager.test.ts)', async () => {
      const owner = await signUp(t.app);
      const agent = await createAgent(t, owner);
      const res = await t.app.inject({ url: `/api/v1/agent-status?agent_id=${agent.id}`, headers: { 'x-agent-jwt': await agentJwt(t, agent) } });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(json<Status>(res), { ...json<Status>(await t.app.inject({ url: `/api/v1/agents/${agent.id}/status` })), password_manager: 'not_applicable' });
    });

    it('422 without agent_id; 401 without, with a bad or with another agent\'s JWT; 403 when revoked', async () => {
      const owner = await signUp(t.app);
      const agent = await createAgent(t, owner);
      const other = await createAgent(t, owner, 'Other');
      const noId = await t.app.inject({ url: '/api/v1/agent-status', headers: { 'x-agent-jwt': await agentJwt(t, agent) } });
      assert.equal(noId.statusCode, 422);
      assert.deepEqual(json<{ detail: { loc: string[] }[] }>(noId).detail[0]?.loc, ['query', 'agent_id']);
      const url = `/api/v1/agent-status?agent_id=${agent.id}`;
      const missing = await t.app.inject({ url });
      assert.equal(missing.statusCode, 401);
      assert.ok(json<{ next_step?: string }>(missing).next_step);
      assert.equal((await t.app.inject({ url, headers: { 'x-agent-jwt': 'garbage' } })).statusCode, 401);
      assert.equal((await t.app.inject({ url, headers: { 'x-agent-jwt': await agentJwt(t, other) } })).statusCode, 401);
      // Signed with another key under this agent's id.
      const { privateKey } = await generateAgentKeyPair();
      const forged = await createAgentJwt(privateKey, agent.id, { iat: seconds(t.clock.now()) });
      assert.equal((await t.app.inject({ url, headers: { 'x-agent-jwt': forged } })).statusCode, 401);
      const expired = await createAgentJwt(agent.privateKey, agent.id, { iat: seconds(t.clock.now()) - 1000, lifetimeSec: 300 });
      assert.equal((await t.app.inject({ url, headers: { 'x-agent-jwt': expired } })).statusCode, 401);
      await t.app.inject({ method: 'POST', url: `/api/agents/${agent.id}/flag`, headers: owner.auth, payload: { flag: 'revoked' } });
      const revoked = await t.app.inject({ url, headers: { 'x-agent-jwt': await agentJwt(t, agent) } });
      assert.equal(revoked.statusCode, 403);
      assert.equal(json<{ detail: string }>(revoked).detail, 'agent revoked by its owner');
    });
  });

  describe('POST /api/v1/agent-status and GET /api/agents/{agent_id}/statuses', () => {
    it('keeps the latest status per site for the owner and records activity', async () => {
      const owner = await signUp(t.app);
      const agent = await createAgent(t, owner);
      const report = async (payload: Record<string, unknown>) =>
        t.app.inject({ method: 'POST', url: '/api/v1/agent-status', payload: { agent_id: agent.id, agent_jwt: await agentJwt(t, agent), ...payload } });
      let res = await report({ status: 'starting' });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(json(res), { ok: true });
      t.clock.advance(1000);
      assert.equal((await report({ status: 'browsing shoes', site: 'shop.example' })).statusCode, 200);
      t.clock.advance(1000);
      assert.equal((await report({ status: 'idle' })).statusCode, 200);

      res = await t.app.inject({ url: `/api/agents/${agent.id}/statuses`, headers: owner.auth });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(json(res), [
        { site: '', status: 'idle', reported_at: new Date(t.clock.now()).toISOString() },
        { site: 'shop.example', status: 'browsing shoes', reported_at: new Date(t.clock.now() - 1000).toISOString() },
      ]);
      const activity = json<{ items: { action: string; site: string | null; detail: Record<string, unknown> }[] }>(
        await t.app.inject({ url: '/api/activity?action=agent.status', headers: owner.auth }),
      );
      assert.deepEqual(activity.items.map((i) => [i.site, i.detail.status]), [[null, 'idle'], ['shop.example', 'browsing shoes'], [null, 'starting']]);
    });

    it('refuses bad input (422), bad JWTs (401) and revoked agents (403); the list is owner only', async () => {
      const owner = await signUp(t.app);
      const stranger = await signUp(t.app);
      const agent = await createAgent(t, owner);
      const jwt = await agentJwt(t, agent);
      for (const payload of [
        { agent_id: agent.id, agent_jwt: jwt },
        { agent_id: agent.id, agent_jwt: jwt, status: '' },
        { agent_id: agent.id, agent_jwt: jwt, status: 'x'.repeat(501) },
        { agent_id: agent.id, agent_jwt: jwt, status: 'ok', site: 5 },
        { agent_jwt: jwt, status: 'ok' },
      ]) {
        assert.equal((await t.app.inject({ method: 'POST', url: '/api/v1/agent-status', payload })).statusCode, 422, JSON.stringify(payload).slice(0, 60));
      }
      assert.equal((await t.app.inject({ method: 'POST', url: '/api/v1/agent-status', payload: { agent_id: agent.id, agent_jwt: jwt, status: 'x'.repeat(500) } })).statusCode, 200);
      assert.equal((await t.app.inject({ method: 'POST', url: '/api/v1/agent-status', payload: { agent_id: agent.id, agent_jwt: 'x', status: 'ok' } })).statusCode, 401);
      assert.equal((await t.app.inject({ url: `/api/agents/${agent.id}/statuses` })).statusCode, 401);
      assert.equal((await t.app.inject({ url: `/api/agents/${agent.id}/statuses`, headers: stranger.auth })).statusCode, 404);
      await t.app.inject({ method: 'DELETE', url: `/api/agents/${agent.id}`, headers: owner.auth });
      assert.equal((await t.app.inject({ method: 'POST', url: '/api/v1/agent-status', payload: { agent_id: agent.id, agent_jwt: jwt, status: 'ok' } })).statusCode, 403);
    });

    it('limits status reports to 60 per agent per minute', async () => {
      const owner = await signUp(t.app);
      const agent = await createAgent(t, owner);
      const jwt = await agentJwt(t, agent);
      t.clock.set(Math.ceil(t.clock.now() / 60_000) * 60_000); // start of a rate window
      const send = () => t.app.inject({ method: 'POST', url: '/api/v1/agent-status', payload: { agent_id: agent.id, agent_jwt: jwt, status: 'busy' } });
      for (let i = 0; i < 60; i++) assert.equal((await send()).statusCode, 200);
      const limited = await send();
      assert.equal(limited.statusCode, 429);
      assert.ok(Number(limited.headers['retry-after']) > 0);
    });
  });

  describe('POST /api/v1/agent-notify', () => {
    it('queues a note for the owner and records it in activity', async () => {
      const owner = await signUp(t.app);
      const agent = await createAgent(t, owner, 'Travel bot');
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/agent-notify',
        payload: { agent_id: agent.id, agent_jwt: await agentJwt(t, agent), text: 'Booked the 9:40 train.', title: 'Done', kind: 'done' },
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(json(res), { ok: true, inbox: true, devices: 0 }, 'says where the note went: the inbox, no device yet');
      await t.services.store.pushDevices.upsert({ id: 'dev_notes', userId: owner.user.id, kind: 'webpush', address: 'https://push.example/notes', p256dh: 'BPk', auth: 'au', name: 'phone', createdAt: 0, lastUsedAt: null });
      const again = await t.app.inject({ method: 'POST', url: '/api/v1/agent-notify', payload: { agent_id: agent.id, agent_jwt: await agentJwt(t, agent), text: 'Booked the 9:40 train.', title: 'Done', kind: 'done' } });
      assert.deepEqual(json(again), { ok: true, inbox: true, devices: 1 });
      const inbox = json<{ items: { type: string; title: string; body: string }[] }>(await t.app.inject({ url: '/api/notifications', headers: owner.auth }));
      assert.deepEqual(inbox.items.filter((n) => n.type === 'note').map((n) => ({ title: n.title, body: n.body })), Array(2).fill({ title: 'Travel bot: Done', body: 'Booked the 9:40 train.' }));
      const activity = json<{ items: { action: string; agent_id: string; detail: Record<string, unknown> }[] }>(
        await t.app.inject({ url: '/api/activity?action=agent.note', headers: owner.auth }),
      );
      assert.equal(activity.items.length, 2);
      assert.equal(activity.items[0]?.agent_id, agent.id);
      assert.deepEqual(activity.items[0]?.detail, { title: 'Done', text: 'Booked the 9:40 train.', kind: 'done' });
    });

    it('defaults title to empty and kind to agent', async () => {
      const owner = await signUp(t.app);
      const agent = await createAgent(t, owner);
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/agent-notify', payload: { agent_id: agent.id, agent_jwt: await agentJwt(t, agent), text: 'hello' } });
      assert.equal(res.statusCode, 200);
      const [note] = (await t.services.store.notifications.list(owner.user.id, { before: 0, limit: 10, since: 0 })).filter((n) => n.type === 'note');
      assert.equal(note?.title, `Note from ${agent.name}`, 'no title: the inbox names the agent');
      assert.equal(note?.body, 'hello');
      const [act] = await t.services.store.activity.list(owner.user.id, { before: 0, limit: 10, action: 'agent.note' });
      assert.deepEqual(act?.detail, { title: '', text: 'hello', kind: 'agent' });
    });

    it('refuses bad input (422), bad JWTs (401) and revoked agents (403)', async () => {
      const owner = await signUp(t.app);
      const agent = await createAgent(t, owner);
      const jwt = await agentJwt(t, agent);
      const base = { agent_id: agent.id, agent_jwt: jwt };
      for (const extra of [{}, { text: '' }, { text: 'x'.repeat(2001) }, { text: 'a', kind: 'Done' }, { text: 'a', kind: 'a'.repeat(33) }, { text: 'a', kind: '' }, { text: 'a', kind: 'done-1' }, { text: 'a', title: 'x'.repeat(201) }]) {
        const res = await t.app.inject({ method: 'POST', url: '/api/v1/agent-notify', payload: { ...base, ...extra } });
        assert.equal(res.statusCode, 422, JSON.stringify(extra).slice(0, 60));
      }
      assert.equal((await t.app.inject({ method: 'POST', url: '/api/v1/agent-notify', payload: { ...base, text: 'x'.repeat(2000), kind: 'a'.repeat(32) } })).statusCode, 200);
      assert.equal((await t.app.inject({ method: 'POST', url: '/api/v1/agent-notify', payload: { ...base, agent_jwt: 'nope', text: 'a' } })).statusCode, 401);
      await t.app.inject({ method: 'POST', url: `/api/agents/${agent.id}/flag`, headers: owner.auth, payload: { flag: 'revoked' } });
      assert.equal((await t.app.inject({ method: 'POST', url: '/api/v1/agent-notify', payload: { ...base, text: 'a' } })).statusCode, 403);
    });

    it('limits notes to 30 per agent per minute; the next minute is open again; other agents are not affected', async () => {
      const owner = await signUp(t.app);
      const agent = await createAgent(t, owner);
      const other = await createAgent(t, owner, 'Other');
      t.clock.set(Math.ceil(t.clock.now() / 60_000) * 60_000);
      const send = async (a = agent) => t.app.inject({ method: 'POST', url: '/api/v1/agent-notify', payload: { agent_id: a.id, agent_jwt: await agentJwt(t, a), text: 'tick' } });
      for (let i = 0; i < 30; i++) assert.equal((await send()).statusCode, 200);
      const limited = await send();
      assert.equal(limited.statusCode, 429);
      assert.equal(json<{ detail: string }>(limited).detail, 'rate limit exceeded');
      assert.equal((await send(other)).statusCode, 200);
      t.clock.advance(60_000);
      assert.equal((await send()).statusCode, 200);
      const notes = (await t.services.store.notifications.list(owner.user.id, { before: 0, limit: 100, since: 0 })).filter((n) => n.type === 'note');
      assert.equal(notes.length, 32);
    });
  });
});
