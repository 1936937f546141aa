import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { countLoopTurns } from './helpers/event-loop-turns.ts';
import type { RevokedAgent } from '@mandate/protocol';
import { COURTESY_CAP, type CourtesyEntry, courtesyOf, keptCourtesy } from '../src/domain/revocation/revocation-bound.ts';
import { LISTED_FOR_MS } from '../src/domain/revocation/revocation-window.ts';
import type { RevokedAgentRow } from '../src/store/ports/index.ts';

// Issue 22: the revocation list's bound across accounts, as pure functions (revocation-bound.ts).
// The attack end to end: revocation-bound-attack.test.ts (in process) and
// revocation-bound-http.test.ts (a real server and a local-mode site).

const NOW = 100_000_000;

const row = (over: Partial<RevokedAgentRow> = {}): RevokedAgentRow => ({
  id: 'ag_1', userId: 'u_1', status: 'active', flag: 'revoked', flagRevSeq: 5, flaggedAt: NOW - LISTED_FOR_MS, removedAt: null, unblockedAt: null, unblockedRevSeq: null, blockedRevSeq: null, suspendedRevSeq: null, ...over,
});
const entryOf = (r: RevokedAgentRow): RevokedAgent => ({ id: r.id, flag: r.flag === 'suspicious' ? 'suspicious' : 'revoked', rev_seq: r.flagRevSeq ?? 0 });

/** `count` courtesy entries of `owner`, blocked at NOW - LISTED_FOR_MS - i (so entry 0 is the newest). */
const owned = (owner: string, count: number, flag: RevokedAgent['flag'] = 'revoked'): CourtesyEntry[] =>
  Array.from({ length: count }, (_, i) => ({ entry: { id: `ag_${owner}_${String(i).padStart(4, '0')}`, flag, rev_seq: i + 1 }, owner, at: NOW - LISTED_FOR_MS - i }));

const keptOf = (kept: Set<string>, owner: string) => [...kept].filter((id) => id.startsWith(`ag_${owner}_`)).sort();

describe('the revocation list bound: which entries are courtesy', () => {
  it('a block is a courtesy entry from the moment its window ends, never before', () => {
    const fresh = row({ flaggedAt: NOW - LISTED_FOR_MS + 1 });
    assert.equal(courtesyOf(fresh, entryOf(fresh), NOW), undefined, 'in the window: it may refuse a live pass');
    const aged = row();
    assert.deepEqual(courtesyOf(aged, entryOf(aged), NOW), { entry: entryOf(aged), owner: 'u_1', at: NOW - LISTED_FOR_MS });
  });

  it('what may still refuse a live pass, or whose age is unknown, is never a courtesy entry', () => {
    const cases: Record<string, RevokedAgentRow> = {
      'a block of unknown age (the safe side)': row({ flaggedAt: null }),
      'a tombstone': row({ status: 'removed', removedAt: NOW - 1 }),
      'a lifted block in its window': row({ flag: 'ok', flagRevSeq: null, flaggedAt: null, unblockedAt: NOW - 1, unblockedRevSeq: 4 }),
      'an old block, re-set after a lift still in the window': row({ unblockedAt: NOW - 1, unblockedRevSeq: 3 }),
    };
    for (const [what, r] of Object.entries(cases)) assert.equal(courtesyOf(r, entryOf(r), NOW), undefined, what);
    // Lifted to `suspicious` in the window: listed as `revoked` at the block's rev_seq, so not courtesy.
    const lifted = row({ flag: 'suspicious', flagRevSeq: 9, flaggedAt: NOW - 1, unblockedAt: NOW - 1, unblockedRevSeq: 4 });
    assert.equal(courtesyOf(lifted, { id: lifted.id, flag: 'revoked', rev_seq: 4 }, NOW), undefined);
  });

  it('a `suspicious` flag refuses nothing, so it is a courtesy entry however new', () => {
    const r = row({ flag: 'suspicious', flaggedAt: NOW - 1 });
    assert.equal(courtesyOf(r, entryOf(r), NOW)?.entry.flag, 'suspicious');
  });
});

describe('the revocation list bound: what is kept', () => {
  it('keeps everything up to the cap', async () => {
    const all = [...owned('a', 100), ...owned('b', 3)];
    assert.equal((await keptCourtesy(all, 103)).size, 103);
    assert.equal(COURTESY_CAP, 10_000);
  });

  it('over the cap, hostile accounts with the most lose first: every other owner keeps all of theirs', async () => {
    const hostile = Array.from({ length: 50 }, (_, i) => owned(`h${String(i).padStart(2, '0')}`, 100)).flat();
    const others = [...owned('alice', 7), ...owned('bob', 1), ...owned('carol', 40)];
    const cap = 1000;
    const kept = await keptCourtesy([...hostile, ...others], cap);
    assert.equal(kept.size, cap);
    assert.equal(keptOf(kept, 'alice').length, 7);
    assert.equal(keptOf(kept, 'bob').length, 1);
    // 1000 - 8 = 992 for 51 owners of 40 or more: a level of 19, and 23 of them get a 20th.
    const levels = [...Array.from({ length: 50 }, (_, i) => keptOf(kept, `h${String(i).padStart(2, '0')}`).length), keptOf(kept, 'carol').length];
    assert.ok(levels.every((n) => n === 19 || n === 20), levels.join(','));
    assert.equal(levels.filter((n) => n === 20).length, 992 - 19 * 51);
    assert.ok(keptOf(kept, 'carol').length >= Math.max(...levels.slice(0, 50)) - 1);
  });

  it('within an owner, keeps blocks before `suspicious` flags and newer before older', async () => {
    const blocks = owned('a', 10);
    const suspicious = owned('s', 10, 'suspicious').map((c) => ({ ...c, owner: 'a', at: NOW }));
    const kept = await keptCourtesy([...suspicious, ...blocks, ...owned('b', 10)], 10);
    assert.deepEqual(keptOf(kept, 'a'), blocks.slice(0, 5).map((c) => c.entry.id), 'the five newest blocks');
    assert.equal(keptOf(kept, 's').length, 0);
  });

  it('keeps the same entries for the same rows read in the same order (every node reads them by agent id)', async () => {
    const all = [...owned('a', 30), ...owned('b', 30), ...owned('c', 30), ...owned('d', 2)];
    const one = [...(await keptCourtesy(all, 47))].sort();
    assert.equal(one.length, 47);
    assert.deepEqual([...(await keptCourtesy([...all], 47))].sort(), one);
    // Within an owner, the order read makes no difference; a, b, c share 45: 15 each.
    const perOwnerShuffled = [...owned('a', 30).reverse(), ...owned('b', 30), ...owned('c', 30).reverse(), ...owned('d', 2)];
    assert.deepEqual([...(await keptCourtesy(perOwnerShuffled, 47))].sort(), one);
    // The room left over goes to the owners above the level in the order they were first read.
    const margin = await keptCourtesy([...owned('a', 30), ...owned('b', 30), ...owned('c', 30)], 46);
    assert.deepEqual(['a', 'b', 'c'].map((o) => keptOf(margin, o).length), [16, 15, 15]);
    const otherOrder = await keptCourtesy([...owned('c', 30), ...owned('b', 30), ...owned('a', 30)], 46);
    assert.deepEqual(['a', 'b', 'c'].map((o) => keptOf(otherOrder, o).length), [15, 15, 16]);
  });

  it('a million entries are shared out in steps, with the event loop free between them', async () => {
    const all = [...Array.from({ length: 9000 }, (_, i) => owned(`m${String(i).padStart(4, '0')}`, 100)).flat(), ...Array.from({ length: 100_000 }, (_, i) => owned(`one${i}`, 1)).flat()];
    const started = performance.now();
    const { result: kept, turns } = await countLoopTurns(() => keptCourtesy(all, 10_000));
    assert.equal(kept.size, 10_000);
    assert.equal(all.length, 1_000_000);
    // 109 000 owners share 10 000 places: level 0, and the 10 000 smallest owners (of one entry) get one.
    assert.equal([...kept].filter((id) => id.startsWith('ag_one')).length, 10_000);
    assert.ok(performance.now() - started < 20_000);
    assert.ok(turns >= 20, `the event loop turned ${turns} times`);
  });

  it('a cap of zero lists no courtesy entry', async () => {
    assert.equal((await keptCourtesy(owned('a', 5), 0)).size, 0);
  });
});
