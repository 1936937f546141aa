import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FixedClock } from '../src/clock.ts';
import { expectStatus, json, testApp, type TestApp } from './helpers/app.ts';
import { createAgent } from './helpers/agents.ts';
import { accessRequest, approve, ownerWithPasskey, respond } from './helpers/approvals.ts';

// Issue 27, item 6: the inbox showed every request as still asking "approve with your passkey".
// Each notification about a request says how that request stands now (`request_status`).

interface Item { type: string; txn_id?: string; request_status?: string }

describe('GET /api/notifications: how each request ended', () => {
  let t: TestApp;
  const clock = new FixedClock();
  before(async () => {
    t = await testApp({ clock });
  });
  after(() => t.close());

  it('says approved, denied, expired, pending, and denied for the requests of a revoked agent', async () => {
    const owner = await ownerWithPasskey(t);
    const shopper = await createAgent(t, owner, 'Shopper');
    const approved = await accessRequest(t, shopper, { site: 'a.example' });
    const denied = await accessRequest(t, shopper, { site: 'b.example' });
    const expired = await accessRequest(t, shopper, { site: 'c.example' });
    expectStatus(await approve(t, owner, approved), 200);
    expectStatus(await respond(t, owner, denied, { approve: false }), 200);
    clock.advance(3_600_000);
    const pending = await accessRequest(t, shopper, { site: 'd.example' });
    const helper = await createAgent(t, owner, 'Helper');
    const cancelled = await accessRequest(t, helper, { site: 'e.example' });
    expectStatus(await t.app.inject({ method: 'POST', url: `/api/agents/${helper.id}/flag`, headers: owner.auth, payload: { flag: 'revoked' } }), 200);

    const res = await t.app.inject({ url: '/api/notifications', headers: owner.auth });
    expectStatus(res, 200);
    const items = json<{ items: Item[] }>(res).items;
    const statusOf = (txn: string) => items.find((i) => i.txn_id === txn)?.request_status;
    assert.deepEqual(
      { approved: statusOf(approved), denied: statusOf(denied), expired: statusOf(expired), pending: statusOf(pending), cancelled: statusOf(cancelled) },
      { approved: 'approved', denied: 'denied', expired: 'expired', pending: 'pending', cancelled: 'denied' },
    );
    for (const item of items.filter((i) => !i.txn_id)) assert.equal(item.request_status, undefined, `${item.type}: no request, no status`);
  });
});
