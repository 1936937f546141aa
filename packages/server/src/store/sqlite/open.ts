import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely } from 'kysely';
import type { Store } from '../ports/index.ts';
import type { Database } from '../schema.ts';
import { kyselyStore } from '../kysely-store.ts';
import { migrate } from '../migrations/index.ts';
import { withStatementCache } from './statement-cache.ts';
import { sqliteHotPath } from './hot-path.ts';
import { sqlitePassIssuance } from './pass-issuance.ts';
import { sqliteTokenReads } from './token-reads.ts';
import { ImmediateSqliteDialect } from './immediate-transactions.ts';

/**
 * Opens (creating if needed) the embedded database `mandate.db` in `dataDir`, in WAL mode.
 * `onWorkerRestart` hears of each of its worker threads started again after one stopped
 * (`sqlite-verify`, `sqlite-passes`: the metrics count them).
 */
export async function openSqliteStore(dataDir: string, fileName = 'mandate.db', onWorkerRestart?: (worker: string) => void): Promise<Store> {
  const path = fileName === ':memory:' ? ':memory:' : join(dataDir, fileName);
  if (path !== ':memory:') mkdirSync(dataDir, { recursive: true });
  const database = new SQLite(path);
  database.pragma('journal_mode = WAL');
  // FULL: a committed single-use record survives a power cut, as it would in PostgreSQL.
  database.pragma('synchronous = FULL');
  database.pragma('foreign_keys = ON');
  database.pragma('busy_timeout = 5000');
  const db = new Kysely<Database>({ dialect: new ImmediateSqliteDialect({ database: withStatementCache(database) }) });
  await migrate(db as Kysely<unknown>, 'sqlite');
  // An in-memory database is private to its connection: there the hot path stays on Kysely's.
  if (path === ':memory:') return kyselyStore(db, 'sqlite');
  const passes = sqlitePassIssuance(path, undefined, () => onWorkerRestart?.('sqlite-passes'));
  const reads = sqliteTokenReads(path);
  return kyselyStore(db, 'sqlite', sqliteHotPath(path, () => onWorkerRestart?.('sqlite-verify')), {
    batch: passes.batch,
    rotations: passes.rotations,
    ...reads,
    async close() {
      await passes.close();
      reads.close();
    },
  });
}
