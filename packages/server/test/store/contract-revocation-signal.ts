import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { until, sleep } from '../helpers/until.ts';
import { type OpenStore, useStore } from './use-store.ts';

/** The revocation stream's signal (decisions §30): every rev_seq advance is told, after its commit only. */
export function revocationSignalContract(name: string, open: OpenStore): void {
  describe(`store contract (revocation signal): ${name}`, () => {
    const store = useStore(open);

    it('tells each rev_seq advanced, outside or inside a transaction, after the commit; never a rolled-back one; other counters not at all', async () => {
      const heard: (number | undefined)[] = [];
      const stop = store.revocationSignal.subscribe((v) => heard.push(v));
      try {
        const a = await store.counters.next('rev_seq');
        await until(`rev_seq ${a} told`, () => (heard.includes(a) ? true : undefined), { ms: 5000, everyMs: 10 });

        let inside: number | undefined;
        const b = await store.transaction(async (repos) => {
          const v = await repos.counters.next('rev_seq');
          await sleep(50);
          inside = heard.includes(v) ? v : undefined;
          return v;
        });
        assert.equal(inside, undefined, 'not told before the commit');
        await until(`rev_seq ${b} told after the commit`, () => (heard.includes(b) ? true : undefined), { ms: 5000, everyMs: 10 });

        await assert.rejects(store.transaction(async (repos) => {
          await repos.counters.next('rev_seq');
          throw new Error('roll back');
        }), /roll back/);
        await store.counters.next('other_counter');
        await sleep(300);
        // The rolled-back advance was b + 1 (a NOTIFY of b itself may come late: the local signal came first).
        assert.ok(heard.every((v) => v === undefined || v <= b), `a rolled-back advance and other counters are never told (heard ${heard.join(',')})`);
        const c = await store.counters.next('rev_seq');
        await until(`rev_seq ${c} told`, () => (heard.includes(c) ? true : undefined), { ms: 5000, everyMs: 10 });
        assert.ok(heard.every((v) => v === undefined || v === a || v === b || v === c), `only rev_seq values (heard ${heard.join(',')})`);
      } finally {
        stop();
      }
      const before = heard.length;
      await store.counters.next('rev_seq');
      await sleep(100);
      assert.equal(heard.length, before, 'not told after unsubscribing');
    });
  });
}
