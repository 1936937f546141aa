import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryReplayCache, createVerifier, type ReplayCacheOption } from '../src/index.ts';
import { HolderCounts } from '../src/local/replay-holders.ts';

// MemoryReplayCache on its own (issue 14, item 2): expiry first, each agent within its share, a full
// cache taking from the largest holder, horizons refusing what was forgotten. The attack through
// the verifier: replay-cache-abuse.test.ts; random interleavings: replay-property.test.ts.

const T = 1_000_000; // unix s
const LIFE = 250; // what the verifier asks: now + 250
const from = (agentId: string, iat: number) => ({ agentId, iat });
let n = 0;
const jti = (): string => `jti-${(n++).toString(36).padStart(8, '0')}`;

describe('MemoryReplayCache', () => {
  it('expired proofs go first, raising no horizon; an agent holding nothing is forgotten', async () => {
    const cache = new MemoryReplayCache({ maxEntries: 3, maxEntriesPerAgent: 3 });
    for (let i = 0; i < 3; i++) assert.equal(await cache.consume(jti(), T + LIFE, T, from('ag_a', T)), true);
    assert.equal(cache.size, 3);
    const later = T + LIFE; // all three expire now
    assert.equal(await cache.consume(jti(), later + LIFE, later, from('ag_b', later)), true);
    assert.equal(cache.size, 1, 'the expired three were dropped, no live entry evicted');
    assert.equal(cache.held('ag_a'), 0);
    assert.equal(cache.agentCount, 1, 'ag_a held nothing and had no horizon: forgotten');
    // ag_a's horizon was not raised: an unseen proof of it, as old as the verifier still takes, passes.
    assert.equal(await cache.consume(jti(), later + LIFE, later, from('ag_a', later - 120)), true);
  });

  it('a full default cache (100 000 proofs, the finding) takes the next ones at once, and expiry empties it in one call', async () => {
    const cache = new MemoryReplayCache();
    for (let i = 0; i < 100_000; i++) assert.equal(await cache.consume(jti(), T + LIFE, T, from(`ag_${i % 10}`, T)), true);
    assert.equal(cache.size, 100_000);
    assert.equal(await cache.consume(jti(), T + 1 + LIFE, T + 1, from('ag_new', T + 1)), true, 'full: evicts, never refuses');
    assert.equal(cache.size, 100_000);
    assert.equal(await cache.consume(jti(), T + 2 * LIFE, T + LIFE, from('ag_new', T + LIFE)), true);
    assert.equal(cache.size, 2, 'all but the two newest expired and were dropped in that one call');
    assert.ok(cache.slots < 1000, `${cache.slots} list slots left for 2 proofs`);
  });

  it('an eviction costs the same in a big cache as in a small one (no scan of the entries)', async () => {
    // Timed relative to a small cache, so a loaded machine slows both alike. A scan per request
    // (or a Map used as a queue, which V8 makes O(deleted) to read from the front) is ~100x here.
    const flood = async (maxEntries: number) => {
      const cache = new MemoryReplayCache({ maxEntries, maxEntriesPerAgent: maxEntries });
      let now = T;
      const send = (agent: string) => cache.consume(jti(), now + LIFE, now, from(agent, now));
      for (let i = 0; i < maxEntries; i++) await send(`ag_${i % 3}`);
      const started = performance.now();
      for (let i = 0; i < 20_000; i++) {
        if (i % 100 === 0) now++;
        assert.equal(await send(`ag_${i % 5}`), true);
      }
      assert.ok(cache.slots <= 3 * maxEntries + 200, `${cache.slots} list slots for ${cache.size} proofs`);
      return performance.now() - started;
    };
    const small = Math.min(await flood(1_000), await flood(1_000));
    const big = Math.min(await flood(100_000), await flood(100_000));
    assert.ok(big < 10 * small, `20 000 evicting requests: ${big.toFixed(0)} ms with 100 000 entries, ${small.toFixed(0)} ms with 1 000`);
  });

  it('an agent over its share loses its own oldest proof: its replay is refused by the raised horizon, newer proofs pass, others are untouched', async () => {
    const cache = new MemoryReplayCache({ maxEntries: 100, maxEntriesPerAgent: 3 });
    const other = jti();
    assert.equal(await cache.consume(other, T + LIFE, T, from('ag_honest', T - 60)), true);
    const sent = [jti(), jti(), jti()];
    for (const [i, id] of sent.entries()) assert.equal(await cache.consume(id, T + i + LIFE, T + i, from('ag_flood', T + i)), true);
    assert.equal(await cache.consume(jti(), T + 3 + LIFE, T + 3, from('ag_flood', T + 3)), true, 'over its share: accepted, its oldest evicted');
    assert.equal(cache.held('ag_flood'), 3);
    assert.equal(await cache.consume(sent[0]!, T + 4 + LIFE, T + 4, from('ag_flood', T)), 'before_horizon', 'the evicted proof replayed');
    assert.equal(await cache.consume(jti(), T + 4 + LIFE, T + 4, from('ag_flood', T)), 'before_horizon', 'any proof of it signed at or before the horizon');
    assert.equal(await cache.consume(sent[2]!, T + 4 + LIFE, T + 4, from('ag_flood', T + 2)), false, 'a held proof replayed');
    assert.equal(await cache.consume(jti(), T + 4 + LIFE, T + 4, from('ag_flood', T + 1)), true, 'signed after the horizon: passes');
    assert.equal(await cache.consume(other, T + 4 + LIFE, T + 4, from('ag_honest', T - 60)), false, 'the other agent keeps its proof');
    assert.equal(await cache.consume(jti(), T + 4 + LIFE, T + 4, from('ag_honest', T - 100)), true, 'and its whole window');
  });

  it('a full cache evicts from the agent holding the most, never from a small holder', async () => {
    const cache = new MemoryReplayCache({ maxEntries: 10, maxEntriesPerAgent: 10 });
    const big = Array.from({ length: 7 }, () => jti());
    for (const id of big) assert.equal(await cache.consume(id, T + LIFE, T, from('ag_big', T - 5)), true);
    const small = Array.from({ length: 3 }, () => jti());
    for (const id of small) assert.equal(await cache.consume(id, T + LIFE, T, from('ag_small', T - 100)), true);
    for (let i = 0; i < 3; i++) assert.equal(await cache.consume(jti(), T + 1 + LIFE, T + 1, from(`ag_new${i}`, T + 1)), true, 'full, never refused');
    assert.equal(cache.size, 10);
    assert.equal(cache.held('ag_small'), 3, 'the small holder untouched');
    assert.equal(cache.held('ag_big'), 4);
    for (const id of small) assert.equal(await cache.consume(id, T + 2 + LIFE, T + 2, from('ag_small', T - 100)), false);
    assert.equal(await cache.consume(big[0]!, T + 2 + LIFE, T + 2, from('ag_big', T - 5)), 'before_horizon');
    assert.equal(await cache.consume(jti(), T + 2 + LIFE, T + 2, from('ag_small', T - 110)), true, "the small holder's old-but-valid proofs still pass");
  });

  it('more proofs than its share within one second: the rest of that second is refused, the next second passes', async () => {
    // iat has whole seconds: forgetting one proof of second s means refusing all of that second.
    const cache = new MemoryReplayCache({ maxEntries: 100, maxEntriesPerAgent: 2 });
    assert.equal(await cache.consume(jti(), T + LIFE, T, from('ag_burst', T)), true);
    assert.equal(await cache.consume(jti(), T + LIFE, T, from('ag_burst', T)), true);
    assert.equal(await cache.consume(jti(), T + LIFE, T, from('ag_burst', T)), true, 'unseen when its horizon was below it');
    assert.equal(await cache.consume(jti(), T + LIFE, T, from('ag_burst', T)), 'before_horizon');
    assert.equal(await cache.consume(jti(), T + 1 + LIFE, T + 1, from('ag_burst', T + 1)), true);
  });

  it('a horizon lasts until the proof it stands for would have expired', async () => {
    const cache = new MemoryReplayCache({ maxEntries: 100, maxEntriesPerAgent: 1 });
    const first = jti();
    assert.equal(await cache.consume(first, T + LIFE, T, from('ag_a', T)), true);
    assert.equal(await cache.consume(jti(), T + 10 + LIFE, T + 10, from('ag_a', T + 10)), true);
    assert.equal(await cache.consume(first, T + 100 + LIFE, T + 100, from('ag_a', T)), 'before_horizon');
    assert.equal(cache.agentCount, 1);
    await cache.consume(jti(), T + 2 * LIFE + 20, T + LIFE + 20, from('ag_b', T + LIFE + 20));
    assert.equal(cache.agentCount, 1, "ag_a's proof and horizon both expired: forgotten, memory back");
  });

  it('more agents than maxEntries: the oldest horizon-only agents are folded into one horizon for agents not remembered; no replay gets through', async () => {
    const cache = new MemoryReplayCache({ maxEntries: 3, maxEntriesPerAgent: 3 });
    const sent: [string, string, number][] = [];
    const send = async (agent: string, now: number, iat: number) => {
      const id = jti();
      assert.equal(await cache.consume(id, now + LIFE, now, from(agent, iat)), true, `${agent} ${iat}`);
      sent.push([agent, id, iat]);
    };
    await send('ag_1', T, T);
    await send('ag_1', T, T);
    await send('ag_2', T, T);
    await send('ag_3', T, T);
    await send('ag_4', T + 1, T + 1);
    await send('ag_5', T + 1, T + 1);
    assert.ok(cache.agentCount <= 3 && cache.size <= 3, `${cache.agentCount} agents, ${cache.size} proofs`);
    for (const [agent, id, iat] of sent) {
      assert.notEqual(await cache.consume(id, T + 2 + LIFE, T + 2, from(agent, iat)), true, `${agent} replays ${id}`);
    }
    assert.equal(await cache.consume(jti(), T + 2 + LIFE, T + 2, from('ag_6', T)), 'before_horizon', 'the cost: a new agent with a proof that old');
    assert.equal(await cache.consume(jti(), T + 2 + LIFE, T + 2, from('ag_6', T + 1)), true, 'its newer proofs pass');
  });

  it('the three-argument form (no agent, no iat) stays safe: a replay or a proof before the horizon answers false', async () => {
    const cache = new MemoryReplayCache({ maxEntries: 2, maxEntriesPerAgent: 2 });
    const a = jti();
    assert.equal(await cache.consume(a, T + LIFE, T), true);
    assert.equal(await cache.consume(a, T + LIFE, T), false);
    assert.equal(await cache.consume(jti(), T + LIFE, T), true);
    assert.equal(await cache.consume(jti(), T + 1 + LIFE, T + 1), true, 'full: the oldest evicted, not refused');
    assert.equal(await cache.consume(a, T + 2 + LIFE, T + 2), false, 'the evicted one replayed');
  });

  it('concurrent calls with one proof: exactly one is accepted', async () => {
    const cache = new MemoryReplayCache({ maxEntries: 5 });
    const id = jti();
    const results = await Promise.all(Array.from({ length: 20 }, () => cache.consume(id, T + LIFE, T, from('ag_a', T))));
    assert.equal(results.filter((r) => r === true).length, 1);
  });
});

describe('the replayCache budget option', () => {
  const make = (replayCache: unknown, mode: 'local' | 'cloud' = 'local') =>
    createVerifier({ mode, serviceUrl: 'http://127.0.0.1:9', site: 'shop.example', replayCache: replayCache as ReplayCacheOption });

  it('bad values are refused when the verifier is created, with what is wrong', () => {
    const cases: [unknown, RegExp][] = [
      [{ maxEntries: 0 }, /replayCache\.maxEntries must be a positive integer, not 0/],
      [{ maxEntries: -5 }, /maxEntries must be a positive integer, not -5/],
      [{ maxEntries: 1.5 }, /maxEntries must be a positive integer, not 1\.5/],
      [{ maxEntries: Number.NaN }, /maxEntries must be a positive integer, not NaN/],
      [{ maxEntries: Number.POSITIVE_INFINITY }, /maxEntries must be a positive integer, not Infinity/],
      [{ maxEntries: '1000' }, /maxEntries must be a positive integer, not "1000"/],
      [{ maxEntries: 2 ** 60 }, /maxEntries must be a positive integer/],
      [{ maxEntriesPerAgent: 0 }, /replayCache\.maxEntriesPerAgent must be a positive integer, not 0/],
      [{ maxEntries: 10, maxEntriesPerAgent: 11 }, /maxEntriesPerAgent \(11\) must not exceed maxEntries \(10\)/],
      [{ maxEntrys: 10 }, /unknown option maxEntrys \(known: maxEntries, maxEntriesPerAgent\)/],
      [null, /replayCache must be a ReplayCache \(an object with consume\) or \{ maxEntries, maxEntriesPerAgent \}/],
      [100_000, /replayCache must be a ReplayCache/],
      [{ consume: 'yes' }, /replayCache\.consume must be a function/],
    ];
    for (const [value, message] of cases) {
      assert.throws(() => make(value), (e: unknown) => e instanceof TypeError && message.test(e.message), `${JSON.stringify(value)}`);
    }
    assert.throws(() => make({ maxEntries: 0 }, 'cloud'), /maxEntries/, 'in cloud mode too: the option is a bug of the site either way');
    assert.throws(() => new MemoryReplayCache({ maxEntries: 0 }), /maxEntries must be a positive integer/);
  });

  it('defaults: 100 000 proofs, a tenth of them per agent; a budget object or a cache instance is taken', () => {
    const d = new MemoryReplayCache();
    assert.equal(d.maxEntries, 100_000);
    assert.equal(d.maxEntriesPerAgent, 10_000);
    assert.equal(new MemoryReplayCache({ maxEntries: 5 }).maxEntriesPerAgent, 1);
    for (const ok of [undefined, {}, { maxEntries: 1 }, { maxEntries: 50_000, maxEntriesPerAgent: 50_000 }, new MemoryReplayCache(), { consume: async () => true }]) {
      make(ok).close();
    }
  });
});

describe('HolderCounts', () => {
  it('finds the largest holder as counts move by one', () => {
    const h = new HolderCounts<{ name: string; slot: number }>();
    const [a, b, c] = ['a', 'b', 'c'].map((name) => ({ name, slot: 0 })) as [{ name: string; slot: number }, { name: string; slot: number }, { name: string; slot: number }];
    assert.equal(h.largest(), undefined);
    h.increment(a, 0);
    h.increment(b, 0);
    h.increment(c, 0);
    h.increment(b, 1);
    assert.equal(h.largest(), b);
    h.decrement(b, 2);
    assert.equal(h.largest()?.slot !== undefined && [a, b, c].includes(h.largest()!), true, 'a tie at 1');
    h.decrement(a, 1); // a leaves the middle of the list: c and b are still found
    h.decrement(b, 1);
    assert.equal(h.largest(), c);
    h.decrement(c, 1);
    assert.equal(h.largest(), undefined);
  });
});
