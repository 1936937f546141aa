import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type OpenStore, useStore } from './use-store.ts';

/** The storage contract of what the metrics read at scrape (docs/operations/metrics.md), on every backend. */
export function metricsContract(name: string, open: OpenStore): void {
  describe(`store contract (metrics): ${name}`, () => {
    const store = useStore(open);

    it('counts the outbox backlog: messages neither sent nor failed, due or not, claimed or not', async () => {
      const start = await store.outbox.countPending();
      await store.outbox.addMany([
        { userId: 'u_m', channel: 'webpush', kind: 'a', payload: {}, createdAt: 100, deviceId: 'dev_m' },
        { userId: 'u_m', channel: 'webpush', kind: 'b', payload: {}, createdAt: 100, deviceId: 'dev_m' },
        { userId: 'u_m', channel: 'webpush', kind: 'c', payload: {}, createdAt: 100, deviceId: 'dev_m', nextAttemptAt: 10_000_000 },
      ]);
      assert.equal(await store.outbox.countPending(), start + 3);
      const claimed = (await store.outbox.claimDue('node-m', 200, 60_000, 100)).filter((m) => m.userId === 'u_m');
      assert.equal(claimed.length, 2);
      assert.equal(await store.outbox.countPending(), start + 3, 'a claimed message is still pending');
      await store.outbox.finish(claimed[0]!.id, 'node-m', { sentAt: 300 });
      await store.outbox.finish(claimed[1]!.id, 'node-m', { failedAt: 300, error: 'gone' });
      assert.equal(await store.outbox.countPending(), start + 1);
    });
  });
}
