import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createAgent, type TestAgent } from './helpers/agents.ts';
import { expectStatus, json, remoteAddress, signUp, testApp, type TestApp } from './helpers/app.ts';
import { ownerWithPasskey, poll, respond, type Owner } from './helpers/approvals.ts';
import { decideMode, denialPauses, lookupMode, parentDomains, pauseKey } from '../src/domain/modes/mode-rules.ts';
import type { ApprovalModeRow } from '../src/store/ports/index.ts';

// Approval modes (decisions §19): the owner's GET/POST, and the decision at filing time, on SQLite
// and PostgreSQL under a fixed clock (the 3600 s pause after a denial, the hourly limit).

describe('approval mode rules (domain/modes/mode-rules.ts)', () => {
  const row = (site: string, mode: ApprovalModeRow['mode'], hourlyLimit = 20): ApprovalModeRow => ({ agentId: 'ag_x', site, mode, hourlyLimit });

  it('looks up the exact host, parent domains nearest first, *, then ask/20', () => {
    assert.deepEqual(parentDomains('a.b.example.com'), ['b.example.com', 'example.com', 'com']);
    const rows = [row('*', 'smart', 5), row('example.com', 'allow', 7), row('b.example.com', 'ask', 9)];
    assert.deepEqual(lookupMode(rows, 'b.example.com'), { mode: 'ask', hourlyLimit: 9, site: 'b.example.com' });
    assert.deepEqual(lookupMode(rows, 'x.a.b.example.com'), { mode: 'ask', hourlyLimit: 9, site: 'b.example.com' });
    assert.deepEqual(lookupMode(rows, 'shop.example.com'), { mode: 'allow', hourlyLimit: 7, site: 'example.com' });
    assert.deepEqual(lookupMode(rows, 'other.org'), { mode: 'smart', hourlyLimit: 5, site: '*' });
    assert.deepEqual(lookupMode([], 'other.org'), { mode: 'ask', hourlyLimit: 20, site: null });
  });

  it('pauses the domain or the host', () => {
    assert.equal(pauseKey('a.shop.example.com', 'domain'), 'example.com');
    assert.equal(pauseKey('shop.example.co.uk', 'domain'), 'example.co.uk');
    assert.equal(pauseKey('a.shop.example.com', 'host'), 'a.shop.example.com');
    assert.equal(denialPauses('a.example.com', 'b.example.com', 'domain'), true);
    assert.equal(denialPauses('a.example.com', 'b.example.com', 'host'), false);
    assert.equal(denialPauses('example.com', 'example.org', 'domain'), false);
  });

  it('decides: ask asks; allow all but money and security; smart only low, same host, no recent denial, within the limit', () => {
    const base = { site: 'shop.example', details: {}, recentlyDenied: false, autoApprovedThisHour: 0 };
    const m = (mode: ApprovalModeRow['mode'], hourlyLimit = 20) => ({ mode, hourlyLimit, site: 'shop.example' });
    assert.equal(decideMode({ ...base, match: m('ask'), category: 'low' }).approve, false);
    for (const c of ['delete', 'publish', 'unknown', 'low'] as const) assert.equal(decideMode({ ...base, match: m('allow'), category: c }).approve, true, c);
    for (const c of ['money', 'security'] as const) assert.equal(decideMode({ ...base, match: m('allow'), category: c }).approve, false, c);
    assert.equal(decideMode({ ...base, match: m('smart'), category: 'low' }).approve, true);
    for (const c of ['money', 'security', 'delete', 'publish', 'unknown'] as const) assert.equal(decideMode({ ...base, match: m('smart'), category: c }).approve, false, c);
    assert.equal(decideMode({ ...base, details: { host: 'shop.example', target_host: 'evil.example' }, match: m('smart'), category: 'low' }).approve, false);
    assert.equal(decideMode({ ...base, details: { host: 'shop.example', target_host: 'shop.example' }, match: m('smart'), category: 'low' }).approve, true);
    assert.equal(decideMode({ ...base, recentlyDenied: true, match: m('smart'), category: 'low' }).approve, false);
    assert.equal(decideMode({ ...base, autoApprovedThisHour: 3, match: m('smart', 3), category: 'low' }).approve, false);
    assert.equal(decideMode({ ...base, autoApprovedThisHour: 3, match: m('allow', 3), category: 'low' }).approve, false);
  });
});

type ModesView = { default: { mode: string; hourly_limit: number }; sites: Record<string, { mode: string; hourly_limit: number }>; pause_scope: string };

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`approval modes over HTTP (${backend})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp({ backend });
    });
    after(() => t.close());

    const setMode = (owner: { auth: Record<string, string> }, agent: TestAgent, body: Record<string, unknown>) =>
      t.app.inject({ method: 'POST', url: `/api/agents/${agent.id}/approval-modes`, headers: owner.auth, payload: body });
    const getModes = (owner: { auth: Record<string, string> }, agent: TestAgent) => t.app.inject({ url: `/api/agents/${agent.id}/approval-modes`, headers: owner.auth });
    async function file(agent: TestAgent, site: string, action: string, details: Record<string, unknown> = {}) {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/agent-approval', remoteAddress: remoteAddress(), payload: { agent_id: agent.id, agent_jwt: await agent.jwt(), site, action, details } });
      expectStatus(res, 200);
      return json<{ txn_id: string; status: string }>(res);
    }

    it('GET answers ask/20 by default; POST sets, "off" is allow, allow not for *, null removes; limits checked', async () => {
      const owner = await signUp(t.app);
      const agent = await createAgent(t, owner);
      const first = await getModes(owner, agent);
      expectStatus(first, 200);
      assert.deepEqual(json(first), { default: { mode: 'ask', hourly_limit: 20 }, sites: {}, pause_scope: 'domain' });
      expectStatus(await setMode(owner, agent, { site: '*', mode: 'smart', hourly_limit: 5 }), 200);
      expectStatus(await setMode(owner, agent, { site: 'Shop.Example', mode: 'off' }), 200);
      const set = await setMode(owner, agent, { site: 'news.example', mode: 'ask', hourly_limit: 200, pause_scope: 'host' });
      assert.deepEqual(json<ModesView>(set), { default: { mode: 'smart', hourly_limit: 5 }, sites: { 'shop.example': { mode: 'allow', hourly_limit: 20 }, 'news.example': { mode: 'ask', hourly_limit: 200 } }, pause_scope: 'host' });
      expectStatus(await setMode(owner, agent, { site: 'news.example', mode: null }), 200);
      assert.deepEqual(Object.keys(json<ModesView>(await getModes(owner, agent)).sites), ['shop.example']);
      for (const body of [{ site: '*', mode: 'allow' }, { site: '*', mode: 'off' }, { site: 'https://x.example/', mode: 'ask' }, { site: 'x.example', mode: 'ask', hourly_limit: 0 }, { site: 'x.example', mode: 'ask', hourly_limit: 201 }]) {
        const res = await setMode(owner, agent, body);
        assert.equal(res.statusCode, 400, `${JSON.stringify(body)}: ${res.body}`);
      }
      for (const body of [{ site: 'x.example', mode: 'sometimes' }, { site: 'x.example' }, { mode: 'ask' }, { site: 'x.example', mode: 'ask', pause_scope: 'world' }, { site: 'x.example', mode: 'ask', hourly_limit: 1.5 }]) {
        expectStatus(await setMode(owner, agent, body), 422);
      }
    });

    it('owner only: agent credentials 401, another owner 404', async () => {
      const owner = await signUp(t.app);
      const agent = await createAgent(t, owner);
      const jwt = await agent.jwt();
      expectStatus(await t.app.inject({ url: `/api/agents/${agent.id}/approval-modes`, headers: { authorization: `Bearer ${jwt}` } }), 401);
      expectStatus(await t.app.inject({ method: 'POST', url: `/api/agents/${agent.id}/approval-modes`, headers: { authorization: `Bearer ${jwt}` }, payload: { site: '*', mode: 'smart' } }), 401);
      expectStatus(await t.app.inject({ url: `/api/agents/${agent.id}/approval-modes` }), 401);
      const other = await signUp(t.app);
      expectStatus(await getModes(other, agent), 404);
      expectStatus(await setMode(other, agent, { site: '*', mode: 'smart' }), 404);
    });

    it('ask: a card; allow: at once except money and security; recorded in Activity and the inbox as auto_approved', async () => {
      const owner = await ownerWithPasskey(t);
      const agent = await createAgent(t, owner, 'Bot');
      assert.equal((await file(agent, 'shop.example', 'click', { label: 'Save' })).status, 'pending', 'default ask');
      expectStatus(await setMode(owner, agent, { site: 'shop.example', mode: 'allow' }), 200);
      const del = await file(agent, 'shop.example', 'click', { label: 'Delete draft' });
      assert.equal(del.status, 'approved');
      assert.equal(json<{ status: string }>(await poll(t, del.txn_id)).status, 'approved');
      assert.equal((await file(agent, 'shop.example', 'click', { label: 'Pay now' })).status, 'pending');
      assert.equal((await file(agent, 'shop.example', 'click', { label: 'Change password' })).status, 'pending');
      assert.equal((await file(agent, 'shop.example', 'click', { label: 'Next', card_fields: true })).status, 'pending');
      // A subdomain inherits the parent's row; another site falls back to ask.
      assert.equal((await file(agent, 'www.shop.example', 'click', { label: 'Post comment' })).status, 'approved');
      assert.equal((await file(agent, 'other.example', 'click', { label: 'Save' })).status, 'pending');

      const acts = await t.services.store.activity.list(owner.user.id, { before: 0, limit: 20, action: 'agent_approval.auto_approved' });
      assert.equal(acts.length, 2);
      assert.ok(acts.every((a) => typeof (a.detail as Record<string, unknown>)['reason'] === 'string'), JSON.stringify(acts));
      const notes = await t.services.store.notifications.list(owner.user.id, { before: 0, limit: 50, since: 0 });
      assert.ok(notes.some((n) => n.type === 'auto_approved' && n.txnId === del.txn_id && n.body.includes('Delete draft')), JSON.stringify(notes));
      const me = json<{ pending: { id: string }[] }>(await t.app.inject({ url: '/api/me', headers: owner.auth }));
      assert.ok(!me.pending.some((p) => p.id === del.txn_id), 'an automatic approval is no card');
    });

    it('smart: only low, same host; 3600 s pause after a denial (domain or host); the hourly limit', async () => {
      const owner = await ownerWithPasskey(t);
      const agent = await createAgent(t, owner);
      expectStatus(await setMode(owner, agent, { site: '*', mode: 'smart', hourly_limit: 3 }), 200);
      assert.equal((await file(agent, 'a.shop.example', 'click', { label: 'Next page' })).status, 'approved');
      assert.equal((await file(agent, 'a.shop.example', 'click', { label: 'Delete draft' })).status, 'pending');
      assert.equal((await file(agent, 'a.shop.example', 'click', { label: 'Save', host: 'a.shop.example', target_host: 'collect.example' })).status, 'pending');

      // The owner denies one on a.shop.example: the whole domain asks for an hour.
      const denied = await file(agent, 'a.shop.example', 'click', { label: 'Submit' });
      expectStatus(await respond(t, owner, denied.txn_id, { approve: false }), 200);
      assert.equal((await file(agent, 'b.shop.example', 'click', { label: 'Save' })).status, 'pending');
      assert.equal((await file(agent, 'other.example', 'click', { label: 'Save' })).status, 'approved');
      t.clock.advance(3599_000);
      assert.equal((await file(agent, 'a.shop.example', 'click', { label: 'Save' })).status, 'pending');
      t.clock.advance(1_000);
      assert.equal((await file(agent, 'a.shop.example', 'click', { label: 'Save' })).status, 'approved');

      // pause_scope host: a denial pauses only its host.
      expectStatus(await setMode(owner, agent, { site: '*', mode: 'smart', hourly_limit: 3, pause_scope: 'host' }), 200);
      const d2 = await file(agent, 'a.shop.example', 'click', { label: 'Submit' });
      expectStatus(await respond(t, owner, d2.txn_id, { approve: false }), 200);
      assert.equal((await file(agent, 'a.shop.example', 'click', { label: 'Save' })).status, 'pending');
      assert.equal((await file(agent, 'b.shop.example', 'click', { label: 'Save' })).status, 'approved');

      // The hourly limit (3): a fresh hour, three at once, the fourth asks; the next hour approves again.
      t.clock.advance(3600_000 - (t.clock.now() % 3600_000));
      for (let i = 0; i < 3; i++) assert.equal((await file(agent, 'c.example', 'click', { label: 'Sort' })).status, 'approved', `#${i}`);
      assert.equal((await file(agent, 'c.example', 'click', { label: 'Sort' })).status, 'pending');
      t.clock.advance(3600_000);
      assert.equal((await file(agent, 'c.example', 'click', { label: 'Sort' })).status, 'approved');
    });
  });
}

export type { Owner };
