import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { batchingSingleUse } from '../../src/store/single-use-batching.ts';
import type { SingleUseItem, SingleUseRepo } from '../../src/store/ports/index.ts';

// Group commit of single-use keys: callers that arrive together share one statement, and none is
// answered before that statement has finished; a failed statement fails each of its callers.

/** A repo whose consumeMany calls wait until the test lets them finish; a key is first once. */
function fakeRepo() {
  const seen = new Set<string>();
  const calls: { items: SingleUseItem[]; now: number; finish: () => void; fail: (e: Error) => void }[] = [];
  const repo: SingleUseRepo = {
    consume: () => Promise.reject(new Error('not used')),
    consumeMany: (items, now) =>
      new Promise<boolean[]>((resolve, reject) => {
        calls.push({
          items: [...items],
          now,
          finish: () => resolve(items.map((i) => !seen.has(`${i.namespace}:${i.key}`) && Boolean(seen.add(`${i.namespace}:${i.key}`)))),
          fail: reject,
        });
      }),
    release: () => Promise.reject(new Error('not used')),
    purgeExpired: async () => 0,
  };
  return { repo, calls };
}

const tick = () => new Promise((r) => setImmediate(r));
/** Lets the event loop turn until `done` holds (at most 20 turns). */
const until = async (done: () => boolean) => {
  for (let i = 0; i < 20 && !done(); i++) await tick();
};
const settled = async <T>(p: Promise<T>): Promise<'pending' | T> => Promise.race([p, tick().then(() => tick()).then(() => 'pending' as const)]);

describe('batchingSingleUse', () => {
  it('sends the callers of one event-loop turn in one statement, at the earliest now among them', async () => {
    const { repo, calls } = fakeRepo();
    const batched = batchingSingleUse(repo);
    const answers = [batched.consume('dpop', 'a', 100, 7), batched.consume('dpop', 'b', 100, 5), batched.consume('dpop', 'a', 100, 9)];
    await tick();
    assert.equal(calls.length, 1);
    assert.deepEqual(calls[0]?.items.map((i) => i.key), ['a', 'b', 'a']);
    assert.equal(calls[0]?.now, 5);
    calls[0]?.finish();
    assert.deepEqual(await Promise.all(answers), [true, true, false]);
  });

  it('answers nobody before the statement has finished (durable), and queues callers meanwhile', async () => {
    const { repo, calls } = fakeRepo();
    const batched = batchingSingleUse(repo, { maxInFlight: 1 });
    const first = batched.consume('dpop', 'a', 100, 0);
    await tick();
    const later = [batched.consume('dpop', 'b', 100, 0), batched.consume('dpop', 'c', 100, 0)];
    await tick();
    assert.equal(await settled(first), 'pending');
    assert.equal(calls.length, 1, 'one statement at a time');
    calls[0]?.finish();
    assert.equal(await first, true);
    await until(() => calls.length === 2);
    assert.equal(calls.length, 2);
    assert.deepEqual(calls[1]?.items.map((i) => i.key), ['b', 'c']);
    calls[1]?.finish();
    assert.deepEqual(await Promise.all(later), [true, true]);
  });

  it('fails every caller of a failed statement, and goes on with the next', async () => {
    const { repo, calls } = fakeRepo();
    const batched = batchingSingleUse(repo);
    const answers = [batched.consume('dpop', 'a', 100, 0), batched.consume('dpop', 'b', 100, 0)];
    await tick();
    calls[0]?.fail(new Error('database down'));
    for (const a of answers) await assert.rejects(a, /database down/);
    const again = batched.consume('dpop', 'a', 100, 0);
    await until(() => calls.length === 2);
    calls[1]?.finish();
    assert.equal(await again, true);
  });

  it('puts at most maxBatch keys in one statement and runs up to maxInFlight statements', async () => {
    const { repo, calls } = fakeRepo();
    const batched = batchingSingleUse(repo, { maxBatch: 2, maxInFlight: 2 });
    const answers = ['a', 'b', 'c', 'd', 'e'].map((k) => batched.consume('dpop', k, 100, 0));
    await tick();
    assert.deepEqual(calls.map((c) => c.items.length), [2, 2]);
    calls[0]?.finish();
    await until(() => calls.length === 3);
    assert.deepEqual(calls.map((c) => c.items.length), [2, 2, 1]);
    calls[1]?.finish();
    calls[2]?.finish();
    assert.deepEqual(await Promise.all(answers), [true, true, true, true, true]);
  });
});
