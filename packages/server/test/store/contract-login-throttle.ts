import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type OpenStore, useStore } from './use-store.ts';

let n = 0;
const uniq = (p: string): string => `${p}:${Date.now().toString(36)}:${(n++).toString(36)}`;

/** What the sign-in throttle needs of the rate counters (release, clear), on every backend. */
export function loginThrottleContract(name: string, open: OpenStore): void {
  describe(`store contract (rate counters for the sign-in throttle): ${name}`, () => {
    const store = useStore(open);
    const W = 60_000;

    it('release takes back one hit of the same window, never below zero', async () => {
      const key = uniq('rel');
      for (let i = 0; i < 3; i++) await store.rateCounters.hit(key, W, 120_000);
      await store.rateCounters.release(key, W, 120_500);
      assert.equal((await store.rateCounters.hit(key, W, 121_000)).count, 3, '3 hits - 1 release + this hit');
      for (let i = 0; i < 5; i++) await store.rateCounters.release(key, W, 120_000);
      assert.equal((await store.rateCounters.hit(key, W, 121_000)).count, 1, 'released to zero, not below');
    });

    it('release in another window (or of a key never hit) changes nothing', async () => {
      const key = uniq('rel-win');
      await store.rateCounters.hit(key, W, 120_000);
      await store.rateCounters.release(key, W, 60_000);
      await store.rateCounters.release(key, W, 180_000);
      await store.rateCounters.release(uniq('never'), W, 120_000);
      assert.equal((await store.rateCounters.hit(key, W, 120_000)).count, 2);
    });

    it('concurrent releases and hits are each counted exactly once', async () => {
      const key = uniq('race');
      for (let i = 0; i < 40; i++) await store.rateCounters.hit(key, W, 240_000);
      await Promise.all([
        ...Array.from({ length: 20 }, () => store.rateCounters.release(key, W, 240_000)),
        ...Array.from({ length: 10 }, () => store.rateCounters.hit(key, W, 240_000)),
      ]);
      assert.equal((await store.rateCounters.hit(key, W, 240_000)).count, 40 - 20 + 10 + 1);
    });

    it('clear forgets every window of one key and no other key', async () => {
      const key = uniq('clr');
      const other = uniq('other');
      await store.rateCounters.hit(key, W, 120_000);
      await store.rateCounters.hit(key, W, 180_000);
      await store.rateCounters.hit(other, W, 180_000);
      await store.rateCounters.clear(key);
      assert.equal((await store.rateCounters.hit(key, W, 120_000)).count, 1);
      assert.equal((await store.rateCounters.hit(key, W, 180_000)).count, 1);
      assert.equal((await store.rateCounters.hit(other, W, 180_000)).count, 2);
    });
  });
}
