import { it } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import type { Dialect } from '../../src/store/ports/index.ts';
import type { Database } from '../../src/store/schema.ts';
import { freshPostgresDatabase } from '../helpers/postgres.ts';

/**
 * A migration's test on both databases: `check` gets an empty database (a SQLite file, a fresh
 * PostgreSQL database), migrates it up to where it starts, writes the old shape, and checks the step.
 */
export function itOnBothDatabases(check: (db: Kysely<Database>, dialect: Dialect) => Promise<void>): void {
  it('on SQLite', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mandate-mig-'));
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: new SQLite(join(dir, 'm.db')) }) });
    try {
      await check(db, 'sqlite');
    } finally {
      await db.destroy();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('on PostgreSQL', async () => {
    const pgdb = await freshPostgresDatabase();
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: pgdb.url, max: 2 }) }) });
    try {
      await check(db, 'postgres');
    } finally {
      await db.destroy();
      await pgdb.drop();
    }
  });
}
