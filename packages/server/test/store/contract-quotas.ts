import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AgentRecord, AuthzRequestRecord, GrantRecord } from '../../src/store/ports/index.ts';
import { SQLITE_PURGE_CHUNK } from '../../src/store/repos/db.ts';
import { type OpenStore, useStore } from './use-store.ts';

let n = 0;
const uniq = (p: string): string => `${p}${Date.now().toString(36)}${(n++).toString(36)}`;

/**
 * The storage contract of the quotas of decisions §25 (counts and the owner lock) and of the purges
 * housekeeping runs, on every backend.
 */
export function quotasContract(name: string, open: OpenStore): void {
  describe(`store contract (quotas and purges): ${name}`, () => {
    const store = useStore(open);

    const request = (over: Partial<AuthzRequestRecord> = {}): AuthzRequestRecord => ({
      id: uniq('t_'), kind: 'initial', agentId: uniq('ag_'), userId: uniq('u_'), site: 'shop.example', scopes: ['list'], userInfo: [],
      action: null, status: 'pending', createdAt: 1000, expiresAt: 301_000, decidedAt: null, grantId: null, oidc: null, ...over,
    });
    const grant = (over: Partial<GrantRecord> = {}): GrantRecord => ({
      id: uniq('gr_'), userId: uniq('u_'), agentId: uniq('ag_'), site: 'shop.example', scopes: ['list'], userInfo: [], status: 'active',
      createdAt: 1000, expiresAt: null, usesLeft: null, refreshHash: null, passesIssued: 0, revokedAt: null, revSeq: null, supersededAt: null, resource: null, ...over,
    });
    const agent = (userId: string, over: Partial<AgentRecord> = {}): AgentRecord => ({
      id: uniq('ag_'), userId, name: 'Bot', kind: 'agent', clientId: null, publicJwk: { kty: 'EC', crv: 'P-256', x: 'x', y: 'y' }, jkt: uniq('jkt'), status: 'active', flag: 'ok',
      flagRevSeq: null, createdAt: 1000, removedAt: null, unblockedAt: null, unblockedRevSeq: null, ...over,
    });

    it("counts an owner's open requests of every kind, with the soonest expiry; answered, expired and other owners' do not count", async () => {
      const userId = uniq('u_');
      assert.deepEqual(await store.quotas.openRequests(userId, 2000), { count: 0, soonestExpiry: null });
      await store.authzRequests.create(request({ userId, expiresAt: 400_000 }));
      await store.authzRequests.create(request({ userId, kind: 'stepup', action: 'pay', expiresAt: 350_000 }));
      await store.authzRequests.create(request({ userId, expiresAt: 500_000, oidc: { clientId: 'c_1', clientName: 'Shop', verified: true, flow: 'ciba', bindingMessage: null } }));
      await store.authzRequests.create(request({ userId, status: 'approved', expiresAt: 300_000 }));
      await store.authzRequests.create(request({ userId, status: 'denied', expiresAt: 300_000 }));
      await store.authzRequests.create(request({ userId, expiresAt: 2000 }));
      await store.authzRequests.create(request({ expiresAt: 300_000 }));
      assert.deepEqual(await store.quotas.openRequests(userId, 2000), { count: 3, soonestExpiry: 350_000 });
      assert.deepEqual(await store.quotas.openRequests(userId, 360_000), { count: 2, soonestExpiry: 400_000 });
    });

    it('counts distinct sites with a live grant of the owner, with the soonest grant expiry', async () => {
      const userId = uniq('u_');
      assert.deepEqual(await store.quotas.liveSites(userId, 2000), { count: 0, soonestExpiry: null });
      await store.grants.create(grant({ userId, site: 'a.example' }));
      await store.grants.create(grant({ userId, site: 'a.example' }));
      await store.grants.create(grant({ userId, site: 'b.example', expiresAt: 90_000 }));
      await store.grants.create(grant({ userId, site: 'c.example', status: 'revoked', revokedAt: 1500, revSeq: 1 }));
      await store.grants.create(grant({ userId, site: 'd.example', status: 'superseded', supersededAt: 1500 }));
      await store.grants.create(grant({ userId, site: 'e.example', expiresAt: 1500 }));
      await store.grants.create(grant({ site: 'f.example' }));
      assert.deepEqual(await store.quotas.liveSites(userId, 2000), { count: 2, soonestExpiry: 90_000 });
      assert.deepEqual(await store.quotas.liveSites(userId, 90_000), { count: 1, soonestExpiry: null });
      assert.equal(await store.quotas.hasLiveSite(userId, 'a.example', 2000), true);
      assert.equal(await store.quotas.hasLiveSite(userId, 'b.example', 2000), true);
      assert.equal(await store.quotas.hasLiveSite(userId, 'b.example', 90_000), false, 'expired');
      assert.equal(await store.quotas.hasLiveSite(userId, 'c.example', 2000), false, 'revoked');
      assert.equal(await store.quotas.hasLiveSite(userId, 'd.example', 2000), false, 'superseded');
      assert.equal(await store.quotas.hasLiveSite(userId, 'f.example', 2000), false, "another owner's");
    });

    it("counts the owner's live agents, not removed ones", async () => {
      const userId = uniq('u_');
      await store.agents.create(agent(userId));
      await store.agents.create(agent(userId, { flag: 'revoked', flagRevSeq: 1 }));
      await store.agents.create(agent(userId, { status: 'removed', removedAt: 1500 }));
      await store.agents.create(agent(uniq('u_')));
      assert.equal(await store.quotas.liveAgents(userId), 2);
    });

    it("the owner lock makes a transaction wait for another's commit, so its count sees that transaction's row", async () => {
      const userId = uniq('u_');
      let locked!: () => void;
      const firstHolds = new Promise<void>((resolve) => (locked = resolve));
      const first = store.transaction(async (repos) => {
        await repos.quotas.lockOwner(userId);
        locked();
        await new Promise((r) => setTimeout(r, 150));
        await repos.authzRequests.create(request({ userId }));
      });
      await firstHolds;
      const seen = store.transaction(async (repos) => {
        await repos.quotas.lockOwner(userId);
        return (await repos.quotas.openRequests(userId, 2000)).count;
      });
      const otherOwner = store.transaction(async (repos) => {
        await repos.quotas.lockOwner(uniq('u_'));
        return 'not blocked';
      });
      await first;
      assert.equal(await seen, 1);
      assert.equal(await otherOwner, 'not blocked');
    });

    it('caps the pending list when asked, newest first', async () => {
      const userId = uniq('u_');
      for (let i = 0; i < 5; i++) await store.authzRequests.create(request({ userId, site: `s${i}.example`, createdAt: 1000 + i }));
      const capped = await store.authzRequests.listPendingForUser(userId, 2000, 3);
      assert.deepEqual(capped.map((r) => r.site), ['s4.example', 's3.example', 's2.example']);
      assert.equal((await store.authzRequests.listPendingForUser(userId, 2000)).length, 5);
    });

    it('purges requests that ended before the cutoff; pending ones stay whatever their age, recent ones stay', async () => {
      const userId = uniq('u_');
      const old = await Promise.all((['approved', 'denied', 'expired', 'consumed'] as const).map(async (status) => {
        const r = request({ userId, status, expiresAt: 10_000, decidedAt: 5000 });
        await store.authzRequests.create(r);
        return r;
      }));
      const stalePending = request({ userId, expiresAt: 10_000 });
      const recent = request({ userId, status: 'denied', expiresAt: 50_000 });
      await store.authzRequests.create(stalePending);
      await store.authzRequests.create(recent);
      assert.ok((await store.authzRequests.purgeEnded(20_000)) >= old.length);
      for (const r of old) assert.equal(await store.authzRequests.byId(r.id), undefined, r.status);
      assert.equal((await store.authzRequests.byId(stalePending.id))?.status, 'pending');
      assert.equal((await store.authzRequests.byId(recent.id))?.status, 'denied');
      assert.equal(await store.authzRequests.purgeEnded(20_000), 0, 'nothing left to purge: harmless to run again');
    });

    it(`purges more than one chunk (${SQLITE_PURGE_CHUNK} rows on SQLite) in one call`, async () => {
      const userId = uniq('u_');
      const total = SQLITE_PURGE_CHUNK + 50;
      await store.transaction(async (repos) => {
        for (let i = 0; i < total; i++) await repos.authzRequests.create(request({ userId, site: `s${i}.example`, status: 'expired', expiresAt: 30_000 }));
      });
      const keep = request({ userId, status: 'expired', expiresAt: 80_000 });
      await store.authzRequests.create(keep);
      assert.equal(await store.authzRequests.purgeEnded(40_000), total);
      assert.ok(await store.authzRequests.byId(keep.id));
    });

    it('purges delivered and given-up outbox messages that ended before the cutoff; waiting and recent ones stay', async () => {
      const holder = uniq('node-');
      const add = (deviceId: string) => store.outbox.add({ userId: 'u_x', channel: 'webpush', kind: 'approval', payload: {}, createdAt: 1000, deviceId, nextAttemptAt: 1000 });
      const sentOld = await add(uniq('dev_'));
      const sentNew = await add(uniq('dev_'));
      const failedDevice = uniq('dev_');
      const failedOld = await add(failedDevice);
      const waiting = await add(uniq('dev_'));
      const claimed = await store.outbox.claimDue(holder, 2000, 60_000, 100);
      assert.deepEqual(claimed.map((m) => m.id).filter((id) => [sentOld, sentNew, failedOld, waiting].includes(id)).length, 4);
      assert.equal(await store.outbox.finish(sentOld, holder, { sentAt: 3000 }), true);
      assert.equal(await store.outbox.finish(sentNew, holder, { sentAt: 90_000 }), true);
      assert.equal(await store.outbox.finish(failedOld, holder, { failedAt: 4000, error: 'gone' }), true);
      assert.equal(await store.outbox.finish(waiting, holder, { retryAt: 5000, error: 'try later' }), true);
      assert.equal(await store.outbox.purgeEnded(50_000), 2);
      const left = (await store.outbox.list({ userId: 'u_x', limit: 100 })).map((m) => m.id);
      assert.ok(!left.includes(sentOld) && !left.includes(failedOld));
      assert.ok(left.includes(sentNew) && left.includes(waiting));
    });

    it('purges notifications older than the cutoff, newer ones stay', async () => {
      const userId = uniq('u_');
      const add = (createdAt: number) => store.notifications.add({ id: uniq('n_'), userId, type: 'note', title: 't', body: 'b', createdAt, readAt: null, txnId: null, takeoverId: null });
      await add(1000);
      await add(2000);
      const kept = await add(9000);
      assert.ok((await store.notifications.purgeOlderThan(5000)) >= 2);
      assert.deepEqual((await store.notifications.list(userId, { before: 0, limit: 10, since: 0 })).map((x) => x.id), [kept.id]);
    });

    it("keeps an agent's statuses of its newest sites only when asked, and lists at most the limit", async () => {
      const agentId = uniq('ag_');
      for (let i = 0; i < 5; i++) await store.agentStatuses.upsert({ agentId, site: `s${i}.example`, status: `at ${i}`, createdAt: 1000 + i });
      assert.equal((await store.agentStatuses.listForAgent(agentId)).length, 5, 'no keep: nothing dropped');
      await store.agentStatuses.upsert({ agentId, site: 's1.example', status: 'again', createdAt: 2000 }, 3);
      assert.deepEqual((await store.agentStatuses.listForAgent(agentId)).map((s) => s.site), ['s1.example', 's4.example', 's3.example']);
      await store.agentStatuses.upsert({ agentId, site: 'new.example', status: 'new', createdAt: 3000 }, 3);
      assert.deepEqual((await store.agentStatuses.listForAgent(agentId)).map((s) => s.site), ['new.example', 's1.example', 's4.example']);
      assert.deepEqual((await store.agentStatuses.listForAgent(agentId, 2)).map((s) => s.site), ['new.example', 's1.example']);
    });
  });
}
