import { describe, it, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { purgeExpired } from '../src/domain/housekeeping.ts';
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
});
