import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { prepared } from '../../src/store/repos/prepared.ts';

interface Db {
  t: { id: string; n: number };
}

describe('prepared queries', () => {
  it('compile once and run with the values of each call', async () => {
    const db = new Kysely<Db>({ dialect: new SqliteDialect({ database: new SQLite(':memory:') }) });
    await db.schema.createTable('t').addColumn('id', 'text').addColumn('n', 'integer').execute();
    await db.insertInto('t').values([{ id: 'a', n: 1 }, { id: 'b', n: 2 }, { id: 'c', n: 3 }]).execute();
    let builds = 0;
    const find = prepared(db, ['id', 'min'], (p) => {
      builds++;
      return db.selectFrom('t').select(['id', 'n']).where('id', '!=', p('id')).where('n', '>=', p<number>('min')).where('id', '!=', 'zzz').orderBy('n');
    });
    assert.deepEqual(await find({ id: 'a', min: 0 }), [{ id: 'b', n: 2 }, { id: 'c', n: 3 }]);
    assert.deepEqual(await find({ id: 'c', min: 1 }), [{ id: 'a', n: 1 }, { id: 'b', n: 2 }]);
    assert.equal(builds, 1);
    await db.destroy();
  });

  it('refuses a placeholder that is not used as a value', async () => {
    const db = new Kysely<Db>({ dialect: new SqliteDialect({ database: new SQLite(':memory:') }) });
    const q = prepared(db, ['id', 'unused'], (p) => db.selectFrom('t').selectAll().where('id', '=', p('id')));
    await assert.rejects(q({ id: 'a', unused: 1 }), /unused is not used/);
    await db.destroy();
  });
});
