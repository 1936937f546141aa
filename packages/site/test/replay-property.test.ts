import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { LIMITS } from '@mandate/protocol';
import { MemoryReplayCache } from '../src/index.ts';

// MemoryReplayCache under random interleavings of agents, clock steps and replays (issue 14, item 2):
// no replay is ever accepted, an unseen proof is never taken for a replay, and fresh unseen proofs
// are accepted. Only what the verifier would pass reaches the cache: proofs with iat within 120 s.

const T = 1_000_000;
const RETAIN = LIMITS.dpopJtiRetentionSec;
const WINDOW = LIMITS.dpopIatToleranceSec;

type Op =
  | { kind: 'tick'; sec: number }
  | { kind: 'send'; agent: number; offset: number }
  | { kind: 'replay'; pick: number }
  | { kind: 'race'; agent: number; offset: number; copies: number };

type Sent = { agent: number; jti: string; iat: number };

/** Drives a cache through `ops`; `check` sees each unseen proof's answer. Returns nothing: asserts inside. */
async function run(cache: MemoryReplayCache, ops: Op[], check: (agent: number, iat: number, newest: boolean, result: unknown) => void): Promise<void> {
  let now = T;
  let n = 0;
  const accepted: Sent[] = [];
  const newestAccepted = new Map<number, number>();
  // Agent -1 stands for a caller of the three-argument form (no agent, no iat).
  const consume = (agent: number, jti: string, iat: number) =>
    agent < 0 ? cache.consume(jti, now + RETAIN, now) : cache.consume(jti, now + RETAIN, now, { agentId: `ag_${agent}`, iat });
  const accept = (agent: number, jti: string, iat: number) => {
    accepted.push({ agent, jti, iat });
    newestAccepted.set(agent, Math.max(newestAccepted.get(agent) ?? -Infinity, iat));
  };

  for (const op of ops) {
    if (op.kind === 'tick') {
      now += op.sec;
    } else if (op.kind === 'send') {
      const jti = `jti-${(n++).toString().padStart(8, '0')}`;
      const iat = op.agent < 0 ? now : now + op.offset;
      const result = await consume(op.agent, jti, iat);
      // (The three-argument form answers false for 'before_horizon' too: it has no other word for it.)
      if (op.agent >= 0) assert.notEqual(result, false, `an unseen proof taken for a replay: agent ${op.agent} iat ${iat - T} now ${now - T}`);
      check(op.agent, iat, iat > (newestAccepted.get(op.agent) ?? -Infinity), result);
      if (result === true) accept(op.agent, jti, iat);
    } else if (op.kind === 'race') {
      const jti = `jti-${(n++).toString().padStart(8, '0')}`;
      const iat = now + op.offset;
      const results = await Promise.all(Array.from({ length: op.copies }, () => consume(op.agent, jti, iat)));
      assert.ok(results.filter((r) => r === true).length <= 1, `one proof sent ${op.copies} times at once: ${results.join()}`);
      if (results.includes(true)) accept(op.agent, jti, iat);
    } else if (accepted.length > 0) {
      const sent = accepted[op.pick % accepted.length] as Sent;
      if (Math.abs(now - sent.iat) > WINDOW) continue; // the verifier refuses it as dpop_stale first
      const result = await consume(sent.agent, sent.jti, sent.iat);
      assert.notEqual(result, true, `a replay accepted: agent ${sent.agent} iat ${sent.iat - T} now ${now - T}`);
    }
    if (op.kind === 'send' || op.kind === 'race') {
      const held = cache.held(op.agent < 0 ? '' : `ag_${op.agent}`);
      assert.ok(held <= cache.maxEntriesPerAgent, `agent ${op.agent} holds ${held}, over its share`);
    }
    assert.ok(cache.size <= cache.maxEntries, `${cache.size} proofs held`);
    assert.ok(cache.agentCount <= cache.maxEntries, `${cache.agentCount} agents remembered`);
  }
}

describe('MemoryReplayCache, random interleavings (fast-check)', () => {
  it('any budget, any mix of agents and clock steps (backwards too): no replay is ever accepted, no unseen proof taken for one', async () => {
    const op: fc.Arbitrary<Op> = fc.oneof(
      { arbitrary: fc.record({ kind: fc.constant('tick' as const), sec: fc.integer({ min: -5, max: 60 }) }), weight: 2 },
      { arbitrary: fc.record({ kind: fc.constant('send' as const), agent: fc.integer({ min: -1, max: 12 }), offset: fc.integer({ min: -WINDOW, max: WINDOW }) }), weight: 6 },
      { arbitrary: fc.record({ kind: fc.constant('replay' as const), pick: fc.nat() }), weight: 3 },
      {
        arbitrary: fc.record({ kind: fc.constant('race' as const), agent: fc.integer({ min: 0, max: 12 }), offset: fc.integer({ min: -WINDOW, max: WINDOW }), copies: fc.integer({ min: 2, max: 4 }) }),
        weight: 1,
      },
    );
    const budget = fc.integer({ min: 1, max: 12 }).chain((max) => fc.record({ maxEntries: fc.constant(max), maxEntriesPerAgent: fc.integer({ min: 1, max }) }));
    await fc.assert(
      fc.asyncProperty(budget, fc.array(op, { minLength: 20, maxLength: 200, size: 'max' }), async (options, ops) => {
        await run(new MemoryReplayCache(options), ops, () => {});
      }),
      { numRuns: 300 },
    );
  });

  it('flooders beside light agents: every unseen proof of a light agent is accepted, and any agent\'s proof newer than all it had accepted', async () => {
    // Agents 0 and 1 flood; 2, 3 and 4 send at most 3 proofs each. Full, the cache holds at least
    // 40 - 9 of the flooders' proofs, so one of them always holds more than any light agent.
    const FLOODERS = 2;
    const LIGHT_MAX = 3;
    const op: fc.Arbitrary<Op> = fc.oneof(
      { arbitrary: fc.record({ kind: fc.constant('tick' as const), sec: fc.integer({ min: 0, max: 40 }) }), weight: 1 },
      { arbitrary: fc.record({ kind: fc.constant('send' as const), agent: fc.integer({ min: 0, max: FLOODERS - 1 }), offset: fc.integer({ min: -WINDOW, max: WINDOW }) }), weight: 12 },
      // Light agents often at the edges of the window: an evicted proof of theirs would show at once.
      {
        arbitrary: fc.record({
          kind: fc.constant('send' as const),
          agent: fc.integer({ min: FLOODERS, max: FLOODERS + 2 }),
          offset: fc.oneof(fc.constantFrom(-WINDOW, WINDOW), fc.integer({ min: -WINDOW, max: WINDOW })),
        }),
        weight: 2,
      },
      { arbitrary: fc.record({ kind: fc.constant('replay' as const), pick: fc.nat() }), weight: 3 },
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 150, maxLength: 400, size: 'max' }), async (generated) => {
        const lightSent = new Map<number, number>();
        const ops = generated.filter((o) => {
          if (o.kind !== 'send' || o.agent < FLOODERS) return true;
          lightSent.set(o.agent, (lightSent.get(o.agent) ?? 0) + 1);
          return (lightSent.get(o.agent) ?? 0) <= LIGHT_MAX;
        });
        const cache = new MemoryReplayCache({ maxEntries: 40, maxEntriesPerAgent: 20 });
        await run(cache, ops, (agent, iat, newest, result) => {
          if (agent >= FLOODERS) assert.equal(result, true, `light agent ${agent}: an unseen proof (iat ${iat - T}) refused`);
          if (newest) assert.equal(result, true, `agent ${agent}: a proof newer than all it had accepted (iat ${iat - T}) refused`);
        });
      }),
      { numRuns: 300 },
    );
  });
});
