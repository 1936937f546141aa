import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { batchingPassIssuance, passIssuanceKeys } from '../src/store/pass-issuance-batching.ts';
import { steps } from '../src/store/stepped-batching.ts';
import type { PassIssuance, PassIssuanceOutcome } from '../src/store/ports/index.ts';
import { openSqliteStore } from '../src/store/sqlite/open.ts';
import { sqlitePassIssuance, startPassWorker } from '../src/store/sqlite/pass-issuance.ts';

const item = (grantId: string, rateKey = `token:${grantId}`): PassIssuance => ({
  grantId, now: 1, newRefreshHash: 'n', rate: { key: rateKey, windowMs: 60_000, limit: 60 }, record: { detail: {}, ip: null, createdAt: 1 },
});

describe('pass issuance group commits (pass-issuance-batching.ts)', () => {
  it('puts calls for one grant or one rate key into successive steps, in the order they came', () => {
    const items = [item('a'), item('b'), item('a'), item('c', 'token:b'), item('a'), item('d')];
    assert.deepEqual(steps(items, passIssuanceKeys), [[0, 1, 5], [2, 3], [4]]);
  });

  it('commits concurrent calls together; a failed step fails its callers and the later steps, never a step already committed', async () => {
    const batches: string[][] = [];
    const commit = batchingPassIssuance(async (batch) => {
      batches.push(batch.map((q) => `${q.grantId}:${q.newRefreshHash}`));
      if (batch.some((q) => q.newRefreshHash === 'boom')) throw new Error('disk full');
      return batch.map((): PassIssuanceOutcome => ({ kind: 'refused' }));
    });
    const calls = [item('a'), item('b'), { ...item('a'), newRefreshHash: 'boom' }, item('c'), { ...item('a'), newRefreshHash: 'third' }]
      .map((q) => commit(q).then((o) => o.kind, (e: Error) => `error: ${e.message}`));
    assert.deepEqual(await Promise.all(calls), ['refused', 'refused', 'error: disk full', 'refused', 'error: disk full']);
    // Step 1 (a, b, c) committed; step 2 (the second call for a) failed; step 3 was not run.
    assert.deepEqual(batches, [['a:n', 'b:n', 'c:n'], ['a:boom']]);
  });

  it('SQLite: a worker thread that stops fails its batch (no pass reported issued) and the next batch gets a new one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mandate-pass-worker-'));
    try {
      await (await openSqliteStore(dir)).close(); // migrated
      let spawned = 0;
      let restarts = 0;
      const passes = sqlitePassIssuance(join(dir, 'mandate.db'), (input) => (++spawned === 1 ? new Worker('process.exit(7)', { eval: true }) : startPassWorker(input)), () => restarts++);
      await assert.rejects(passes.batch([item('gr_x')]), /stopped \(exit code 7\)/);
      assert.deepEqual(await passes.batch([item('gr_missing')]), [{ kind: 'refused' }]);
      assert.equal(spawned, 2);
      assert.equal(restarts, 1, 'the restart is reported (mandate_worker_restarts_total{worker="sqlite-passes"})');
      await passes.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
