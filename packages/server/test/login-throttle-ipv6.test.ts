import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LoginThrottle, NETWORK_FACTOR } from '../src/domain/accounts/login-throttle.ts';
import type { RateCountersRepo } from '../src/store/ports/index.ts';

// The password sign-in throttle's client keys (issue 22, item 4), on the rules alone: an in-memory
// fixed-window counter stands in for the store (whose counters the contract suite covers). Over real
// HTTP: ipv6-throttles-http.test.ts.

function memoryCounters(): RateCountersRepo & { counts: Map<string, number> } {
  const counts = new Map<string, number>();
  const at = (key: string, windowMs: number, now: number) => `${key}@${Math.floor(now / windowMs)}`;
  return {
    counts,
    async hit(key, windowMs, now) {
      const k = at(key, windowMs, now);
      const count = (counts.get(k) ?? 0) + 1;
      counts.set(k, count);
      return { count, resetAt: (Math.floor(now / windowMs) + 1) * windowMs };
    },
    async release(key, windowMs, now) {
      const k = at(key, windowMs, now);
      counts.set(k, Math.max(0, (counts.get(k) ?? 0) - 1));
    },
    async clear(key) {
      for (const k of [...counts.keys()]) if (k.startsWith(`${key}@`)) counts.delete(k);
    },
    async purgeExpired() {
      return 0;
    },
  };
}

const PER_ADDRESS = 3;
const clock = { now: () => 1_000_000 };
const throttle = (counters: RateCountersRepo) => new LoginThrottle(counters, clock, { perAccount: 1000, perAddress: PER_ADDRESS, windowSec: 900 });
const refused = (p: Promise<unknown>) => assert.rejects(p, (e: { status?: number }) => e.status === 429);

describe('password throttle keys an IPv6 client by /64 and /48', () => {
  it('counts every address of one /64, however spelled, as one client', async () => {
    const t = throttle(memoryCounters());
    for (const a of ['2001:db8:1:1::1', '2001:DB8:1:1:0:0:0:2', '2001:db8:1:1:ffff:1:2:3%eth0']) await t.admit(`a${a}@x`, a);
    await refused(t.admit('b@x', '2001:db8:1:1::9'));
    await t.admit('b@x', '2001:db8:1:2::9'); // the next /64 has its own allowance
  });

  it('an IPv4-mapped address is the IPv4 address', async () => {
    const t = throttle(memoryCounters());
    for (const a of ['192.0.2.7', '::ffff:192.0.2.7', '::ffff:c000:207']) await t.admit('c@x', a);
    await refused(t.admit('c@x', '192.0.2.7'));
  });

  it(`a /48 is refused after ${NETWORK_FACTOR} times the per-address limit; IPv4 has no such key`, async () => {
    const t = throttle(memoryCounters());
    let n = 0;
    for (let i = 0; i < NETWORK_FACTOR * PER_ADDRESS; i++) await t.admit(`d${n++}@x`, `2001:db8:2:${(i % 100) + 1}::1`);
    await refused(t.admit('e@x', '2001:db8:2:ffff::1'));
    await t.admit('e@x', '2001:db8:3:1::1'); // another /48
    const v4 = throttle(memoryCounters());
    for (let i = 0; i < 2 * NETWORK_FACTOR * PER_ADDRESS; i++) await v4.admit(`f${i}@x`, `198.51.100.${i + 1}`);
  });

  it('a success gives back its /64 and /48 counts', async () => {
    const counters = memoryCounters();
    const t = throttle(counters);
    const attempt = await t.admit('g@x', '2001:db8:4:1::1');
    await attempt.succeeded();
    assert.deepEqual([...counters.counts.entries()].filter(([k]) => k.startsWith('login:addr:') || k.startsWith('login:net:')).map(([k, v]) => [k.replace(/@.*/, ''), v]), [
      ['login:addr:2001:db8:4:1::/64', 0],
      ['login:net:2001:db8:4::/48', 0],
    ]);
  });
});
