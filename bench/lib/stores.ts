import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import SQLite from 'better-sqlite3';
import { openSqliteStore } from '../../packages/server/src/store/sqlite/open.ts';
import { openPostgresStore } from '../../packages/server/src/store/postgres/open.ts';
import type { Store } from '../../packages/server/src/store/ports/index.ts';

export type Backend = 'sqlite' | 'postgres';

/** Where the PostgreSQL runs create their databases (dropped at the end). */
export const PG_ADMIN_URL = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Raw SQL for bulk seeding, in the dialect of the store. */
export interface RawSql {
  exec(sql: string): Promise<void>;
  /** First column of the first row. */
  scalar(sql: string): Promise<unknown>;
  /** All rows (EXPLAIN output and the like). */
  rows(sql: string): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

/** A fresh, empty database for one benchmark run: SQLite in a temp dir, or a new PostgreSQL database. */
export interface BenchDb {
  backend: Backend;
  dataDir: string;
  /** '' for the embedded store (the server's DATABASE_URL). */
  databaseUrl: string;
  openStore(): Promise<Store>;
  raw(): Promise<RawSql>;
  drop(): Promise<void>;
}

export async function createBenchDb(backend: Backend): Promise<BenchDb> {
  const dataDir = mkdtempSync(join(tmpdir(), 'mandate-bench-'));
  if (backend === 'sqlite') {
    return {
      backend,
      dataDir,
      databaseUrl: '',
      openStore: () => openSqliteStore(dataDir),
      raw: async () => sqliteRaw(join(dataDir, 'mandate.db')),
      drop: async () => rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const name = `mandate_bench_${randomBytes(5).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  return {
    backend,
    dataDir,
    databaseUrl,
    openStore: () => openPostgresStore(databaseUrl),
    raw: () => postgresRaw(databaseUrl),
    drop: async () => {
      await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function adminQuery(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: PG_ADMIN_URL });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

function sqliteRaw(path: string): RawSql {
  const db = new SQLite(path);
  db.pragma('busy_timeout = 10000');
  // Seeding only: the benchmark rebuilds the database on every run, so it needs no fsync per batch.
  db.pragma('synchronous = OFF');
  return {
    exec: async (sql) => void db.exec(sql),
    scalar: async (sql) => db.prepare(sql).pluck().get(),
    rows: async (sql) => db.prepare(sql).all() as Record<string, unknown>[],
    close: async () => void db.close(),
  };
}

async function postgresRaw(url: string): Promise<RawSql> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  return {
    exec: async (sql) => void (await c.query(sql)),
    scalar: async (sql) => {
      const r = await c.query({ text: sql, rowMode: 'array' });
      return (r.rows[0] as unknown[] | undefined)?.[0];
    },
    rows: async (sql) => (await c.query(sql)).rows as Record<string, unknown>[],
    close: () => c.end(),
  };
}
