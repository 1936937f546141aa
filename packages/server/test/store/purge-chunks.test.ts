import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { purgeInChunks } from '../../src/store/repos/db.ts';

describe('purgeInChunks', () => {
  it('repeats the delete until a statement deletes less than a chunk, letting other work run in between', async () => {
    const answers = [3, 3, 1];
    const limits: (number | undefined)[] = [];
    const between: number[] = [];
    let statements = 0;
    const total = await purgeInChunks(3, async (limit) => {
      limits.push(limit);
      statements++;
      setImmediate(() => between.push(statements));
      return answers.shift() ?? 0;
    });
    assert.equal(total, 7);
    assert.deepEqual(limits, [3, 3, 3]);
    // Work queued during a statement ran before the next statement started.
    assert.deepEqual(between.slice(0, 2), [1, 2]);
  });

  it('without a chunk, deletes in one statement', async () => {
    const limits: (number | undefined)[] = [];
    assert.equal(await purgeInChunks(undefined, async (limit) => (limits.push(limit), 5000)), 5000);
    assert.deepEqual(limits, [undefined]);
  });
});
