import { describe, it, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { HOUSEKEEPING_LEASE, LEASE_INTERVALS, housekeepingRound, purgeExpired, scheduleHousekeeping } from '../src/domain/housekeeping.ts';
import { testApp, signUp, type TestApp } from './helpers/app.ts';

describe('housekeeping', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp();
  });
  after(() => t.close());

  it('purges expired sessions, challenges, single-use records and counters, and nothing live', async () => {
    const owner = await signUp(t.app);
    const store = t.services.store;
    await store.singleUse.consume('dpop', 'live-jti', t.clock.now() + 1_000_000, t.clock.now());
    await store.singleUse.consume('dpop', 'old-jti', t.clock.now() + 1000, t.clock.now());
    await store.challenges.create({ challenge: 'old-challenge', purpose: 'login', userId: null, sessionHash: null, subject: null, expiresAt: t.clock.now() + 1000 });
    await store.rateCounters.hit('k', 1000, t.clock.now());
    t.clock.advance(2000);
    const purged = await purgeExpired(store, t.clock);
    assert.equal(purged.singleUse, 1);
    assert.equal(purged.challenges, 1);
    assert.equal(purged.rateCounters, 1);
    assert.equal(purged.sessions, 0);
    assert.equal(await store.singleUse.consume('dpop', 'live-jti', t.clock.now() + 5000, t.clock.now()), false, 'live record kept');
    assert.equal((await t.app.inject({ url: '/api/me', headers: owner.auth })).statusCode, 200);
    t.clock.advance(31 * 86400 * 1000);
    assert.equal((await purgeExpired(store, t.clock)).sessions, 1);
  });

  it('sweeps only on the node holding the lease; another node takes over once it expires', async () => {
    const store = t.services.store;
    const interval = 60_000;
    await store.singleUse.consume('dpop', 'soon-old', t.clock.now() + 1000, t.clock.now());
    t.clock.advance(2000);
    const a = await housekeepingRound(store, t.clock, 'node-a', interval);
    assert.equal(a?.singleUse, 1, 'the first node takes the lease and sweeps');
    assert.equal(await housekeepingRound(store, t.clock, 'node-b', interval), null, 'the second does nothing');
    t.clock.advance(interval);
    assert.ok(await housekeepingRound(store, t.clock, 'node-a', interval), 'the holder renews at each round');
    // node-a stops renewing (it died): node-b is refused until the lease runs out, then takes over.
    t.clock.advance(interval * LEASE_INTERVALS - 1);
    assert.equal(await housekeepingRound(store, t.clock, 'node-b', interval), null);
    t.clock.advance(1);
    assert.ok(await housekeepingRound(store, t.clock, 'node-b', interval));
    assert.equal((await store.leases.get(HOUSEKEEPING_LEASE))?.holder, 'node-b');
    assert.equal(await housekeepingRound(store, t.clock, 'node-a', interval), null, 'a node coming back does not take it back');
  });

  it('a stopping node gives its lease up', async () => {
    const store = t.services.store;
    const lines: string[] = [];
    const log = { info: (_: object, m: string) => void lines.push(m), warn: (_: object, m: string) => void lines.push(`warn: ${m}`) };
    // An expired lease (the earlier test's clock moved on) is free for the scheduler.
    t.clock.advance(10 * 60_000);
    const scheduled = scheduleHousekeeping(store, t.clock, { intervalMs: 20, holder: 'node-stopping', log });
    const deadline = Date.now() + 10_000;
    while (!lines.includes('housekeeping swept') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.ok(lines.includes('housekeeping lease taken: this node runs the background work'), lines.join('\n'));
    assert.equal((await store.leases.get(HOUSEKEEPING_LEASE))?.holder, 'node-stopping');
    await scheduled.stop();
    assert.equal(await store.leases.get(HOUSEKEEPING_LEASE), undefined);
    assert.ok(!lines.some((l) => l.startsWith('warn')), lines.join('\n'));
  });
});
