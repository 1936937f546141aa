import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import SQLite from 'better-sqlite3';
import { withStatementCache } from '../../src/store/sqlite/statement-cache.ts';

describe('SQLite statement cache', () => {
  it('hands out the prepared statement again for the same SQL, at most `max` of them', () => {
    const raw = new SQLite(':memory:');
    const db = withStatementCache(raw, 2);
    const a = db.prepare('select 1 as one');
    assert.equal(db.prepare('select 1 as one'), a);
    db.prepare('select 2 as two');
    db.prepare('select 3 as three'); // the least recently used ('select 1') leaves
    assert.notEqual(db.prepare('select 1 as one'), a);
    db.close();
  });

  it('never hands out a statement that is still being iterated', () => {
    const raw = new SQLite(':memory:');
    const db = withStatementCache(raw);
    raw.exec('create table t (n integer); insert into t values (1), (2), (3)');
    const first = db.prepare('select n from t');
    const seen: unknown[] = [];
    for (const row of first.iterate([])) {
      const inner = db.prepare('select n from t');
      assert.notEqual(inner, first);
      seen.push((row as { n: number }).n, (inner.all([]) as unknown[]).length);
    }
    assert.deepEqual(seen, [1, 3, 2, 3, 3, 3]);
    db.close();
  });
});
