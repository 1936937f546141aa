import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CIBA_KEEP_MS, OUTBOX_KEEP_MS, REQUEST_KEEP_MS, purgeExpired } from '../src/domain/housekeeping.ts';
import { INBOX_MS } from '../src/domain/notifications/inbox.ts';
import { createAgent, type TestAgent } from './helpers/agents.ts';
import { expectStatus, json, signUp, type TestApp, testApp } from './helpers/app.ts';
import { accessRequest, poll, respond } from './helpers/approvals.ts';

/**
 * The housekeeping sweep bounds every table that grows with use (decisions §25): old rows go, recent
 * rows and the rows something still reads stay. On both stores, on the fixed clock.
 */
for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`housekeeping purges (${backend})`, () => {
    let t: TestApp;
    let owner: Awaited<ReturnType<typeof signUp>>;
    let agent: TestAgent;
    before(async () => {
      t = await testApp({ backend });
      owner = await signUp(t.app);
      agent = await createAgent(t, owner);
    });
    after(() => t.close());

    const DAY = 86_400_000;
    /** The owner's trail (read from the store: the month-long waits outlive the session). */
    const actions = async (): Promise<string[]> =>
      (await t.services.store.activity.list(owner.user.id, { before: 0, limit: 200 })).map((r) => `${r.action}:${String(r.detail['txn_id'] ?? '')}`);

    it('requests that ended go a week past their expiry; pending and recent ones stay; the trail keeps their records', async () => {
      const denied = await accessRequest(t, agent, { site: 'denied.example' });
      expectStatus(await respond(t, owner, denied, { approve: false }), 200);
      const unanswered = await accessRequest(t, agent, { site: 'unanswered.example' });
      t.clock.advance(REQUEST_KEEP_MS);
      // A week on: the unanswered one is marked expired (recorded), nothing is deleted yet.
      const first = await purgeExpired(t.services.store, t.clock);
      assert.equal(first.requests, 1);
      assert.equal(first.requestsPurged, 0);
      const recent = await accessRequest(t, agent, { site: 'recent.example' });
      t.clock.advance(5 * 60_000 + 1);
      const second = await purgeExpired(t.services.store, t.clock);
      assert.equal(second.requestsPurged, 2, 'the denied and the unanswered one: a week past their expiry');
      expectStatus(await poll(t, denied), 404);
      expectStatus(await poll(t, unanswered), 404);
      assert.equal(json<{ status: string }>(await poll(t, recent)).status, 'expired', 'recent: the poll marks it expired, it stays');
      t.clock.advance(REQUEST_KEEP_MS);
      assert.equal((await purgeExpired(t.services.store, t.clock)).requestsPurged, 1);
      expectStatus(await poll(t, recent), 404);
      const trail = await actions();
      for (const record of [`request.created:${denied}`, `request.denied:${denied}`, `request.created:${unanswered}`, `request.expired:${unanswered}`, `request.expired:${recent}`]) {
        assert.ok(trail.includes(record), `${record} stays in the trail`);
      }
    });

    it('a pending request is never deleted as such, however old: the sweep marks it expired (and records that) first', async () => {
      const store = t.services.store;
      const stale = await accessRequest(t, agent, { site: 'stale.example' });
      t.clock.advance(30 * DAY);
      // What an older release might have left: a pending row long past its expiry.
      assert.ok((await store.authzRequests.purgeEnded(t.clock.now())) >= 0);
      assert.equal((await store.authzRequests.byId(stale))?.status, 'pending');
      // The sweep marks it expired and records that, then (a month past its expiry) deletes it.
      const swept = await purgeExpired(store, t.clock);
      assert.equal(swept.requests, 1);
      assert.ok((swept.requestsPurged ?? 0) >= 1);
      assert.equal(await store.authzRequests.byId(stale), undefined);
      assert.ok((await actions()).includes(`request.expired:${stale}`), 'its expiry is in the trail');
    });

    it('a CIBA request goes a day past its expiry, before the request it points at', async () => {
      const store = t.services.store;
      const txn = await accessRequest(t, agent, { site: 'ciba.example' });
      const now = t.clock.now();
      await store.oidcCiba.create({ idHash: 'a'.repeat(64), clientId: 'c_x', txnId: txn, agentId: agent.id, userId: owner.user.id, site: 'ciba.example', scopes: ['openid'], intervalSec: 5, lastPollAt: null, consumedAt: null, createdAt: now, expiresAt: now + 300_000 });
      t.clock.advance(300_000 + CIBA_KEEP_MS + 1);
      const swept = await purgeExpired(store, t.clock);
      assert.equal(swept.oidcCiba, 1);
      assert.equal(await store.oidcCiba.byIdHash('a'.repeat(64)), undefined);
      assert.ok(await store.authzRequests.byId(txn), 'the request stays longer than the CIBA row that reads it');
    });

    it('delivered and given-up outbox messages go after a week, notifications after the inbox days; newer ones and waiting ones stay', async () => {
      const store = t.services.store;
      const holder = 'purge-test';
      const start = t.clock.now();
      const add = () => store.outbox.add({ userId: owner.user.id, channel: 'webpush', kind: 'note', payload: { n: 1 }, createdAt: start, deviceId: 'dev_purge', nextAttemptAt: start });
      const [sent, failed, waiting] = [await add(), await add(), await add()];
      const mine = (await store.outbox.claimDue(holder, start, 60_000, 1000)).filter((m) => [sent, failed, waiting].includes(m.id));
      assert.equal(mine.length, 3);
      await store.outbox.finish(sent, holder, { sentAt: start });
      await store.outbox.finish(failed, holder, { failedAt: start, error: 'endpoint gone' });
      await store.outbox.finish(waiting, holder, { retryAt: start + 10 * DAY, error: 'try later' });
      const oldNote = await store.notifications.add({ id: 'n_purge_old', userId: owner.user.id, type: 'note', title: 'old', body: 'b', createdAt: start, readAt: null, txnId: null, takeoverId: null });

      t.clock.set(start + OUTBOX_KEEP_MS - 1);
      await purgeExpired(store, t.clock);
      assert.equal((await store.outbox.list({ userId: owner.user.id, limit: 1000 })).filter((m) => [sent, failed].includes(m.id)).length, 2, 'not a week yet');
      t.clock.set(start + OUTBOX_KEEP_MS + 1);
      const newNote = await store.notifications.add({ id: 'n_purge_new', userId: owner.user.id, type: 'note', title: 'new', body: 'b', createdAt: t.clock.now(), readAt: null, txnId: null, takeoverId: null });
      assert.ok(((await purgeExpired(store, t.clock)).outbox ?? 0) >= 2);
      const left = (await store.outbox.list({ userId: owner.user.id, limit: 1000 })).map((m) => m.id);
      assert.ok(!left.includes(sent) && !left.includes(failed), 'ended a week ago: gone');
      assert.ok(left.includes(waiting), 'still waiting to be sent: stays');

      t.clock.set(start + INBOX_MS + 1);
      await purgeExpired(store, t.clock);
      const inbox = (await store.notifications.list(owner.user.id, { before: 0, limit: 1000, since: 0 })).map((n) => n.id);
      assert.ok(!inbox.includes(oldNote.id), 'past the inbox days: gone');
      assert.ok(inbox.includes(newNote.id), 'newer: stays');
    });
  });
}
