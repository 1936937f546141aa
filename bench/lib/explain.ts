import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, PostgresDialect, SqliteDialect, type LogEvent } from 'kysely';
import type { Database } from '../../packages/server/src/store/schema.ts';
import { agentsRepo } from '../../packages/server/src/store/repos/agents.ts';
import { grantsRepo } from '../../packages/server/src/store/repos/grants.ts';
import { activityRepo } from '../../packages/server/src/store/repos/activity.ts';
import { READ_STANDING } from '../../packages/server/src/store/sqlite/hot-statements.ts';
import { VERIFY_LOOKUPS } from '../../packages/server/src/store/postgres/hot-path.ts';
import type { BenchDb } from './stores.ts';
import { AGENT_SITE, COMMON_ACTION, RARE_SITE } from './activity-filter-data.ts';
import { SITE } from './seed.ts';

/**
 * Query plans of the reads that grow with the data, taken from the store's own repositories: each
 * repository call runs once through a Kysely instance that records the SQL it sends, and that SQL is
 * then explained with the same parameters. A plan that reads a whole large table is flagged.
 */
export interface PlanReport {
  name: string;
  plan: string[];
  /** True when the plan walks a whole table instead of an index (reported for large tables only: on a small one a scan is the right plan). */
  fullScan: boolean;
}

export interface HotQueryArgs {
  agentId: string;
  grantId: string;
  userId: string;
  middleSeq: number;
  filterAgent: string;
  now: number;
  /** Flag plans that read a whole table (only worth it once the tables are large). */
  flagScans: boolean;
}

export async function explainHotQueries(bench: BenchDb, a: HotQueryArgs): Promise<PlanReport[]> {
  const captured: { sql: string; parameters: readonly unknown[] }[] = [];
  const log = (e: LogEvent) => {
    if (e.level === 'query') captured.push({ sql: e.query.sql, parameters: e.query.parameters });
  };
  let sqlite: SQLite.Database | undefined;
  let pool: pg.Pool | undefined;
  const db = bench.backend === 'sqlite'
    ? new Kysely<Database>({ dialect: new SqliteDialect({ database: (sqlite = new SQLite(join(bench.dataDir, 'mandate.db'), { readonly: true })) }), log })
    : new Kysely<Database>({ dialect: new PostgresDialect({ pool: (pool = new pg.Pool({ connectionString: bench.databaseUrl, max: 1 })) }), log });
  // Cloud verify runs its read on the driver directly (store/*/hot-path.ts): that SQL is explained as
  // sent; on PostgreSQL it is one statement with the jti insert (EXPLAIN does not run it).
  const hot: { sql: string; parameters: unknown[] } = sqlite
    ? { sql: READ_STANDING, parameters: [a.grantId, a.agentId] }
    : { sql: VERIFY_LOOKUPS.text, parameters: [[a.agentId], [a.grantId], ['dpop'], ['explain-jti'], [a.now + 250_000], a.now] };
  const calls: [string, () => Promise<unknown>][] = [
    ['verify: agent + grant (+ jti on PostgreSQL), as cloud verify sends it', async () => captured.push(hot)],
    ['activity: first page', () => activityRepo(db, bench.backend).list(a.userId, { before: 0, limit: 51 })],
    ['activity: deep page (before = middle)', () => activityRepo(db, bench.backend).list(a.userId, { before: a.middleSeq, limit: 51 })],
    ['activity: one agent (1 record in 100)', () => activityRepo(db, bench.backend).list(a.userId, { before: 0, limit: 51, agentId: a.filterAgent })],
    ['activity: an agent without records', () => activityRepo(db, bench.backend).list(a.userId, { before: 0, limit: 51, agentId: 'ag_none' })],
    ['activity: one site (1 record in 100)', () => activityRepo(db, bench.backend).list(a.userId, { before: 0, limit: 51, site: AGENT_SITE })],
    ['activity: one action (1 record in 3)', () => activityRepo(db, bench.backend).list(a.userId, { before: 0, limit: 51, action: COMMON_ACTION })],
    ['activity: rare site (1 record in 100k)', () => activityRepo(db, bench.backend).list(a.userId, { before: 0, limit: 51, site: RARE_SITE })],
    ['activity: agent + a site it never used', () => activityRepo(db, bench.backend).list(a.userId, { before: 0, limit: 51, agentId: a.filterAgent, site: SITE })],
    ['activity: agent + site + action', () => activityRepo(db, bench.backend).list(a.userId, { before: 0, limit: 51, agentId: a.filterAgent, site: AGENT_SITE, action: COMMON_ACTION })],
    ['activity: one site, deep page (before = middle)', () => activityRepo(db, bench.backend).list(a.userId, { before: a.middleSeq, limit: 51, site: AGENT_SITE })],
    ['snapshot: revoked agents', () => agentsRepo(db).listRevoked(a.now)],
    ['snapshot: revoked grants', () => grantsRepo(db).listRevoked(a.now)],
  ];
  const reports: PlanReport[] = [];
  try {
    for (const [name, call] of calls) {
      captured.length = 0;
      await call();
      // The last statement that is not transaction control is the read; the statements before it in
      // its transaction (the activity page's planner settings on PostgreSQL) are replayed first.
      const sent = captured.filter((c) => !/^(begin|commit|rollback)$/i.test(c.sql.trim()));
      const q = sent[sent.length - 1];
      if (q === undefined) continue;
      const plan = sqlite
        ? sqlite.prepare(`EXPLAIN QUERY PLAN ${q.sql}`).all(...(q.parameters as unknown[])).map((r) => String((r as { detail: unknown }).detail))
        : await explainPostgres(pool, sent.slice(0, -1), q);
      const fullScan = a.flagScans && plan.some((l) => /^SCAN (agents|grants|activity)\b(?! USING)/.test(l.trim()) || /Seq Scan on (agents|grants|activity)\b/.test(l));
      reports.push({ name, plan, fullScan });
    }
  } finally {
    await db.destroy();
  }
  return reports;
}

/** EXPLAIN of `q` in a transaction that first runs `setup` (as the repository sent them), rolled back. */
async function explainPostgres(pool: pg.Pool | undefined, setup: readonly { sql: string; parameters: readonly unknown[] }[], q: { sql: string; parameters: readonly unknown[] }): Promise<string[]> {
  if (pool === undefined) return [];
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    for (const s of setup) await client.query(s.sql, s.parameters as unknown[]);
    return (await client.query(`EXPLAIN ${q.sql}`, q.parameters as unknown[])).rows.map((r) => String((r as Record<string, unknown>)['QUERY PLAN']));
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
}

export function formatPlans(title: string, reports: readonly PlanReport[]): string {
  const lines = [`\n### ${title}\n`];
  for (const r of reports) {
    lines.push(`- ${r.name}${r.fullScan ? '  **FULL SCAN**' : ''}`);
    for (const l of r.plan) lines.push(`    ${l}`);
  }
  return lines.join('\n');
}
