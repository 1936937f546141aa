import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { openSqliteStore } from '../../src/store/sqlite/open.ts';
import { openPostgresStore } from '../../src/store/postgres/open.ts';
import type { Store } from '../../src/store/ports/index.ts';
import { isDatabaseDown } from '../../src/http/errors.ts';
import { freshPostgresDatabase } from '../helpers/postgres.ts';

// Issue 31, item 5. A store transaction that reads before it writes (a count before an insert: a
// new agent under the owner's limit, say) while another connection to the same database commits
// in between: on SQLite the store's commit threads (cloud verify's jtis, pass issuance) are such
// connections. With SQLite's default DEFERRED begin the transaction's first write then failed at
// once with SQLITE_BUSY_SNAPSHOT, which the service answered 500. Both stores must commit it.

interface Other {
  /** A write on another connection, now; answers the error code when it could not have the lock. */
  write(name: string): Promise<string | undefined>;
  close(): Promise<void>;
}

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`a transaction that reads, then another connection writes, then it writes (${backend})`, () => {
    let store: Store;
    let other: Other;
    let cleanup: () => Promise<void>;
    before(async () => {
      if (backend === 'sqlite') {
        const dir = mkdtempSync(join(tmpdir(), 'mandate-rtw-'));
        store = await openSqliteStore(dir);
        // No busy timeout: told at once when the store holds the write lock.
        const db = new SQLite(join(dir, 'mandate.db'), { timeout: 0 });
        const insert = db.prepare('INSERT INTO counters (name, value) VALUES (?, 1)');
        other = {
          async write(name) {
            try {
              insert.run(name);
              return undefined;
            } catch (e) {
              return String((e as { code?: unknown }).code);
            }
          },
          async close() {
            db.close();
          },
        };
        cleanup = async () => rmSync(dir, { recursive: true, force: true });
      } else {
        const fresh = await freshPostgresDatabase();
        store = await openPostgresStore(fresh.url);
        const client = new pg.Client({ connectionString: fresh.url });
        await client.connect();
        other = {
          async write(name) {
            await client.query('INSERT INTO counters (name, value) VALUES ($1, 1)', [name]);
            return undefined;
          },
          close: () => client.end(),
        };
        cleanup = fresh.drop;
      }
    });
    after(async () => {
      await other.close();
      await store.close();
      await cleanup();
    });

    it('commits; the other write either went first or waited for it, never failed the transaction', async () => {
      let refused: string | undefined;
      const seq = await store.transaction(async (repos) => {
        await repos.users.byId('u_nobody');
        refused = await other.write('other-1');
        return repos.counters.next('mine');
      });
      assert.equal(seq, 1);
      // SQLite: the transaction had the write lock from its start, so the other connection was told
      // "busy" (it would have waited its busy timeout); PostgreSQL: it wrote beside it.
      assert.equal(refused, backend === 'sqlite' ? 'SQLITE_BUSY' : undefined);
      assert.equal(await other.write('other-2'), undefined, 'the lock ends with the transaction');
    });

    it('many such transactions racing the other connection\'s writes all commit', async () => {
      const rounds = Array.from({ length: 40 }, async (_, i) => {
        await new Promise((r) => setTimeout(r, i % 7));
        return store.transaction(async (repos) => {
          await repos.users.byId('u_nobody');
          await other.write(`race-${i}`);
          return repos.counters.next('raced');
        });
      });
      assert.deepEqual((await Promise.all(rounds)).sort((a, b) => a - b), Array.from({ length: 40 }, (_, i) => i + 1));
    });
  });
}

describe('a database that could not lock in time is unavailable (503), not an internal error (500)', () => {
  it('SQLite\'s plain and extended busy, locked and I/O codes', () => {
    for (const code of ['SQLITE_BUSY', 'SQLITE_BUSY_SNAPSHOT', 'SQLITE_BUSY_RECOVERY', 'SQLITE_BUSY_TIMEOUT', 'SQLITE_LOCKED', 'SQLITE_LOCKED_SHAREDCACHE', 'SQLITE_IOERR', 'SQLITE_IOERR_WRITE']) {
      assert.equal(isDatabaseDown(Object.assign(new Error('database is locked'), { code })), true, code);
    }
    for (const code of ['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_ERROR', 'SQLITE_BUSYNESS', '23505']) {
      assert.equal(isDatabaseDown(Object.assign(new Error('x'), { code })), false, code);
    }
  });
});
