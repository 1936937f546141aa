import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { openSqliteStore } from '../../src/store/sqlite/open.ts';
import { openPostgresStore } from '../../src/store/postgres/open.ts';
import { kyselyStore } from '../../src/store/kysely-store.ts';
import type { Database } from '../../src/store/schema.ts';
import { freshPostgresDatabase } from '../helpers/postgres.ts';
import { passIssuanceAcrossNodes, passIssuanceContract } from './contract-pass-issuance.ts';

const tempDir = () => mkdtempSync(join(tmpdir(), 'mandate-passes-'));

// The dialects' own statements: SQLite's worker thread (sqlite/pass-worker.ts), PostgreSQL's one statement per batch.
passIssuanceContract('sqlite (worker thread)', async () => {
  const dir = tempDir();
  return { store: await openSqliteStore(dir), cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
});

passIssuanceContract('postgres (one statement per batch)', async () => {
  const db = await freshPostgresDatabase();
  return { store: await openPostgresStore(db.url), cleanup: db.drop };
});

// The reference: the repositories in one Kysely transaction per batch (repos/pass-issuance.ts).
passIssuanceContract('sqlite in memory (Kysely transaction)', async () => ({ store: await openSqliteStore('', ':memory:'), cleanup: async () => {} }));

passIssuanceContract('postgres (Kysely transaction)', async () => {
  const db = await freshPostgresDatabase();
  await (await openPostgresStore(db.url)).close(); // migrated
  const pool = new pg.Pool({ connectionString: db.url, max: 10, types: { getTypeParser: ((oid: number, format?: 'text' | 'binary') => (oid === 20 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as 'text'))) as typeof pg.types.getTypeParser } });
  // As store/postgres/open.ts does: a connection the database ends (the suite's DROP DATABASE ... WITH
  // (FORCE) at cleanup, should one still be open) must not be an uncaught exception in the test process.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  return { store: kyselyStore(new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }), 'postgres'), cleanup: db.drop };
});

passIssuanceAcrossNodes('postgres', async () => {
  const db = await freshPostgresDatabase();
  return { stores: [await openPostgresStore(db.url), await openPostgresStore(db.url)], cleanup: db.drop };
});

passIssuanceAcrossNodes('sqlite, two connections with their worker threads on one file', async () => {
  const dir = tempDir();
  return { stores: [await openSqliteStore(dir), await openSqliteStore(dir)], cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
});
