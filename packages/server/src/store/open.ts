import type { Store } from './ports.ts';
import { openSqliteStore } from './sqlite/open.ts';
import { openPostgresStore } from './postgres/open.ts';

/** PostgreSQL when a URL is given, the embedded SQLite file in `dataDir` otherwise. */
export function openStore(opts: { databaseUrl: string; dataDir: string }): Promise<Store> {
  return opts.databaseUrl ? openPostgresStore(opts.databaseUrl) : openSqliteStore(opts.dataDir);
}
