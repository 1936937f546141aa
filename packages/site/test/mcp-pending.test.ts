import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PENDING_MAX, PENDING_TTL_MS, PendingApprovals } from '../src/mcp/pending.ts';

// The open approval requests withApproval remembers: an identical call within 5 minutes continues
// the same request (concurrent ones share one filing), a failed filing is not remembered, an
// answered one is forgotten, and the memory is bounded.

describe('PendingApprovals', () => {
  it('continues the same request for 5 minutes, then files anew', async () => {
    let now = 1_000_000;
    const p = new PendingApprovals(() => now);
    const key = PendingApprovals.key('gr_1', 'ag_1', 'delete_note', 'd'.repeat(43));
    let filed = 0;
    const file = async () => `t_${++filed}`;
    const a = p.open(key, file);
    const b = p.open(key, file);
    assert.deepEqual([a.fresh, b.fresh, await a.txn, await b.txn, filed], [true, false, 't_1', 't_1', 1]);
    now += PENDING_TTL_MS - 1;
    assert.equal(p.open(key, file).fresh, false);
    now += 1;
    const c = p.open(key, file);
    assert.deepEqual([c.fresh, await c.txn], [true, 't_2']);
    // Other arguments, another agent or grant: other requests.
    assert.equal(p.open(PendingApprovals.key('gr_1', 'ag_1', 'delete_note', 'e'.repeat(43)), file).fresh, true);
    assert.equal(p.open(PendingApprovals.key('gr_2', 'ag_1', 'delete_note', 'd'.repeat(43)), file).fresh, true);
  });

  it('forgets a failed filing and an answered request; an old answer does not forget a newer request', async () => {
    const p = new PendingApprovals(() => 0);
    const key = PendingApprovals.key('gr', 'ag', 't', 'x');
    const failed = p.open(key, () => Promise.reject(new Error('down')));
    await assert.rejects(failed.txn);
    await Promise.resolve();
    const next = p.open(key, async () => 't_ok');
    assert.equal(next.fresh, true);
    p.forget(key, failed.txn); // a stale handle: the newer request stays
    assert.equal(p.open(key, async () => 't_other').fresh, false);
    p.forget(key, next.txn);
    assert.equal(p.size, 0);
  });

  it('holds at most PENDING_MAX requests, forgetting the oldest', () => {
    const p = new PendingApprovals(() => 0);
    for (let i = 0; i < PENDING_MAX + 5; i++) p.open(`k${i}`, async () => `t_${i}`);
    assert.equal(p.size, PENDING_MAX);
    assert.equal(p.open(`k${PENDING_MAX + 4}`, async () => 'x').fresh, false);
    assert.equal(p.open('k0', async () => 'x').fresh, true);
  });
});
