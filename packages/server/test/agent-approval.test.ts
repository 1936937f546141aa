import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createAgent, type TestAgent } from './helpers/agents.ts';
import { expectStatus, json, remoteAddress, testApp, type TestApp } from './helpers/app.ts';
import { approve, ownerWithPasskey, poll, respond } from './helpers/approvals.ts';

// Agent-initiated approvals (decisions §19): POST /api/v1/agent-approval, polled like any request,
// answered through the one owner approval path, on SQLite and PostgreSQL.

type PollBody = { status: string; kind: string; site: string; action?: string };
type Pending = { id: string; kind: string; action?: string; details?: Record<string, unknown>; category?: string };

async function post(t: TestApp, agent: TestAgent, body: Record<string, unknown> = {}) {
  return t.app.inject({
    method: 'POST',
    url: '/api/v1/agent-approval',
    remoteAddress: remoteAddress(),
    payload: { agent_id: agent.id, site: 'shop.example', action: 'checkout:submit', agent_jwt: await agent.jwt(), ...body },
  });
}

async function file(t: TestApp, agent: TestAgent, body: Record<string, unknown> = {}): Promise<string> {
  const res = await post(t, agent, body);
  expectStatus(res, 200);
  return json<{ txn_id: string }>(res).txn_id;
}

async function polled(t: TestApp, txn: string): Promise<PollBody> {
  const res = await poll(t, txn);
  expectStatus(res, 200);
  return json<PollBody>(res);
}

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`agent approvals: POST /api/v1/agent-approval (${backend})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp({ backend });
    });
    after(() => t.close());

    it('needs no grant: {txn_id, expires_in: 300, status: pending}; card with details and category; push, inbox, activity', async () => {
      const owner = await ownerWithPasskey(t);
      const agent = await createAgent(t, owner, 'Shopper');
      const res = await post(t, agent, { details: { label: '  Pay now  ', amount: '42.00 EUR', host: 'Shop.Example', target_host: 'pay.example', path: '/checkout?step=2', page: 'Checkout', card_fields: true, text_digests: ['a'.repeat(64)] } });
      expectStatus(res, 200);
      const created = json<{ txn_id: string; expires_in: number; status: string }>(res);
      assert.match(created.txn_id, /^t_/);
      assert.equal(created.expires_in, 300);
      assert.equal(created.status, 'pending');

      const me = json<{ pending: Pending[] }>(await t.app.inject({ url: '/api/me', headers: owner.auth }));
      const card = me.pending.find((p) => p.id === created.txn_id);
      assert.ok(card);
      assert.equal(card.kind, 'agent_approval');
      assert.equal(card.action, 'checkout:submit');
      assert.equal(card.category, 'money');
      assert.deepEqual(card.details, { label: 'Pay now', amount: '42.00 EUR', page: 'Checkout', host: 'shop.example', target_host: 'pay.example', path: '/checkout?step=2', card_fields: true, text_digests: ['a'.repeat(64)] });

      const notes = await t.services.store.notifications.list(owner.user.id, { before: 0, limit: 10, since: 0 });
      assert.ok(notes.some((n) => n.txnId === created.txn_id && n.type === 'approval' && n.title === 'Shopper asks before acting on shop.example' && n.body === 'Pay now · approve with your passkey'), JSON.stringify(notes));
      const acts = await t.services.store.activity.list(owner.user.id, { before: 0, limit: 10, action: 'agent_approval.requested' });
      assert.equal(acts.length, 1);

      assert.deepEqual(await polled(t, created.txn_id), { status: 'pending', kind: 'agent_approval', agent: 'Shopper', site: 'shop.example', scopes: [], user_info: [], action: 'checkout:submit' });
    });

    it('approved with a passkey through POST /api/txn/{txn_id}/response, or denied; the poll reads it; several wait for one site', async () => {
      const owner = await ownerWithPasskey(t);
      const agent = await createAgent(t, owner);
      const a = await file(t, agent);
      const b = await file(t, agent, { action: 'form:submit' });
      const c = await file(t, agent);
      expectStatus(await respond(t, owner, a, { approve: true }), 401);
      expectStatus(await approve(t, owner, a), 200);
      expectStatus(await respond(t, owner, b, { approve: false }), 200);
      assert.equal((await polled(t, a)).status, 'approved');
      assert.equal((await polled(t, a)).status, 'approved', 'an agent approval is not consumed by reading it');
      assert.equal((await polled(t, b)).status, 'denied');
      assert.equal((await polled(t, c)).status, 'pending');
      expectStatus(await respond(t, owner, a, { approve: false }), 409);
      assert.equal((await t.services.store.activity.list(owner.user.id, { before: 0, limit: 10, action: 'agent_approval.approved' })).length, 1);
      assert.equal((await t.services.store.activity.list(owner.user.id, { before: 0, limit: 10, action: 'agent_approval.denied' })).length, 1);
      // An identity provider never approves one (passkey only).
      t.clock.advance(301_000);
      assert.equal((await polled(t, c)).status, 'expired');
    });

    it('bad input: 400 for site, action and each detail; 422 for types; 401 for a bad JWT', async () => {
      const owner = await ownerWithPasskey(t);
      const agent = await createAgent(t, owner);
      const bad400: Array<Record<string, unknown>> = [
        { site: 'https://shop.example/' }, { site: `${'a.'.repeat(124)}example` } /* 255 characters */, { site: `${'a'.repeat(64)}.example` }, { site: '' },
        { action: 'Checkout' }, { action: '' }, { action: 'a'.repeat(65) }, { action: 'pay now' }, { action: 'pay.now' },
        { details: { host: 'not a host' } }, { details: { target_host: 'https://x.example' } },
        { details: { path: 'checkout' } }, { details: { path: '/a b' } }, { details: { path: `/${'a'.repeat(300)}` } }, { details: { path: '/é' } },
        { details: { text_digests: Array.from({ length: 9 }, (_, i) => i.toString(16).repeat(64)) } }, { details: { text_digests: ['A'.repeat(64)] } }, { details: { text_digests: ['ab'] } },
        { details: { label: 'Pay \u202e' } }, { details: { label: 'Pay\u0007' } },
      ];
      for (const body of bad400) {
        const res = await post(t, agent, body);
        assert.equal(res.statusCode, 400, `${JSON.stringify(body)}: ${res.body}`);
        assert.ok(json<{ detail: string }>(res).detail.length > 0);
      }
      for (const body of [{ action: 42 }, { details: 'x' }, { details: { card_fields: 'yes' } }, { details: { text_digests: 'a' } }, { site: null }]) {
        expectStatus(await post(t, agent, body), 422);
      }
      expectStatus(await post(t, agent, { agent_jwt: 'nope' }), 401);
      // Texts are cut to their size, not refused; exactly 8 digests and a 300-character path pass.
      const txn = await file(t, agent, { details: { label: 'x'.repeat(500), amount: '9'.repeat(100), item: 'i'.repeat(500), page: 'p'.repeat(500), path: `/${'a'.repeat(299)}`, text_digests: Array.from({ length: 8 }, (_, i) => i.toString(16).repeat(64)) } });
      const me = json<{ pending: Pending[] }>(await t.app.inject({ url: '/api/me', headers: owner.auth }));
      const d = me.pending.find((p) => p.id === txn)?.details ?? {};
      assert.equal((d['label'] as string).length, 80);
      assert.equal((d['amount'] as string).length, 40);
      assert.equal((d['item'] as string).length, 120);
      assert.equal((d['page'] as string).length, 200);
    });

    it('30 per minute per agent, counted apart from step-ups; 50 open requests per owner (§25)', async () => {
      const owner = await ownerWithPasskey(t);
      const agent = await createAgent(t, owner);
      for (let i = 0; i < 30; i++) await file(t, agent);
      const limited = await post(t, agent);
      expectStatus(limited, 429);
      t.clock.advance(60_000);
      for (let i = 0; i < 20; i++) await file(t, agent);
      const full = await post(t, agent);
      expectStatus(full, 429);
      assert.match(full.body, /open/);
    });
  });
}
