import type { Store } from './ports/index.ts';
import { openSqliteStore } from './sqlite/open.ts';
import { openPostgresStore } from './postgres/open.ts';

/**
 * PostgreSQL when a URL is given, the embedded SQLite file in `dataDir` otherwise. `onWorkerRestart`:
 * the store's worker threads (SQLite's) started again after one stopped.
 */
export function openStore(opts: { databaseUrl: string; dataDir: string }, onWorkerRestart?: (worker: string) => void): Promise<Store> {
  return opts.databaseUrl ? openPostgresStore(opts.databaseUrl) : openSqliteStore(opts.dataDir, undefined, onWorkerRestart);
}
