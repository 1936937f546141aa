import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, PostgresDialect, SqliteDialect, type LogEvent } from 'kysely';
import { LISTED_FOR_MS } from '../src/domain/revocation/revocation-window.ts';
import { agentsRepo } from '../src/store/repos/agents.ts';
import { grantsRepo } from '../src/store/repos/grants.ts';
import type { RevokedAgentRow } from '../src/store/ports/index.ts';
import type { Database } from '../src/store/schema.ts';
import { openSqliteStore } from '../src/store/sqlite/open.ts';
import { openPostgresStore } from '../src/store/postgres/open.ts';
import { freshPostgresDatabase } from './helpers/postgres.ts';

/**
 * The revocation list's reads touch only rows of the window (decisions §25, migration 014): with
 * 20 000 grants and 4 000 agents revoked, removed or unblocked long ago and a few recently, every
 * page of every reason reads a range of its partial index, never the tables, on SQLite and on
 * PostgreSQL. The
 * plans are those of the SQL the repositories send (captured from Kysely's log), explained with the
 * same parameters.
 */
const OLD = 20_000;
const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
const LONG_AGO = NOW - 30 * 86_400_000;

async function seed(db: Kysely<Database>): Promise<void> {
  const grant = (i: number, at: number) => ({
    id: `gr_plan${i}`, user_id: 'u_plan', agent_id: `ag_plan${i % 500}`, site: `site-${i}.example`, scopes: '["list"]', user_info: '[]',
    status: i % 3 === 0 ? 'superseded' : 'revoked', created_at: at, expires_at: null, uses_left: null, refresh_hash: null, passes_issued: 0,
    revoked_at: at, rev_seq: i + 1, superseded_at: i % 3 === 0 ? at + 1 : null,
  });
  for (let i = 0; i < OLD; i += 1000) await db.insertInto('grants').values(Array.from({ length: 1000 }, (_, k) => grant(i + k, LONG_AGO + i + k))).execute();
  await db.insertInto('grants').values(Array.from({ length: 5 }, (_, k) => grant(OLD + k, NOW - 1000))).execute();
  // Active grants never revoked: most of any real table.
  await db.insertInto('grants').values(Array.from({ length: 1000 }, (_, k) => ({ ...grant(OLD + 10 + k, LONG_AGO), status: 'active', revoked_at: null, rev_seq: null, superseded_at: null }))).execute();
  const agent = (i: number, o: { status?: string; flag?: string; removedAt?: number | null; unblockedAt?: number | null }) => ({
    id: `ag_plan_${i}`, user_id: 'u_plan', name: 'a', public_jwk: '{}', jkt: 'j', status: o.status ?? 'active', flag: o.flag ?? 'ok', flag_rev_seq: 1,
    created_at: LONG_AGO, removed_at: o.removedAt ?? null, unblocked_at: o.unblockedAt ?? null, unblocked_rev_seq: o.unblockedAt ? 1 : null,
  });
  // Removed long ago (some while blocked), unblocked long ago, live and fine; a few of each recently.
  const agents = [
    ...Array.from({ length: 2000 }, (_, i) => agent(i, { status: 'removed', flag: i % 2 ? 'revoked' : 'ok', removedAt: LONG_AGO + i })),
    ...Array.from({ length: 2000 }, (_, i) => agent(2000 + i, { unblockedAt: LONG_AGO + i })),
    ...Array.from({ length: 2000 }, (_, i) => agent(4000 + i, {})),
    ...Array.from({ length: 50 }, (_, i) => agent(6000 + i, { flag: i % 2 ? 'revoked' : 'suspicious' })),
    agent(9001, { status: 'removed', removedAt: NOW - 1000 }),
    agent(9002, { unblockedAt: NOW - 1000 }),
    agent(9003, { flag: 'revoked' }),
    // Blocked by their operator's switch (migration 024): listed while blocked.
    ...Array.from({ length: 20 }, (_, i) => agent(7000 + i, { status: 'blocked' })),
  ];
  for (let i = 0; i < agents.length; i += 500) await db.insertInto('agents').values(agents.slice(i, i + 500)).execute();
}

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`revocation list query plans (${backend})`, { timeout: 180_000 }, () => {
    let db: Kysely<Database>;
    let explain: (sql: string, parameters: readonly unknown[]) => Promise<string[]>;
    let cleanup: () => Promise<void>;
    const captured: { sql: string; parameters: readonly unknown[] }[] = [];
    const log = (e: LogEvent) => {
      if (e.level === 'query') captured.push({ sql: e.query.sql, parameters: e.query.parameters });
    };

    before(async () => {
      if (backend === 'sqlite') {
        const dir = mkdtempSync(join(tmpdir(), 'mandate-plans-'));
        await (await openSqliteStore(dir)).close(); // migrated
        const sqlite = new SQLite(join(dir, 'mandate.db'));
        db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }), log });
        explain = async (sql, parameters) => sqlite.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...(parameters as unknown[])).map((r) => String((r as { detail: unknown }).detail));
        await seed(db);
        sqlite.exec('ANALYZE');
        cleanup = async () => {
          await db.destroy();
          rmSync(dir, { recursive: true, force: true });
        };
      } else {
        const fresh = await freshPostgresDatabase();
        await (await openPostgresStore(fresh.url)).close();
        const pool = new pg.Pool({ connectionString: fresh.url, max: 1 });
        db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log });
        explain = async (sql, parameters) => (await pool.query(`EXPLAIN ${sql}`, parameters as unknown[])).rows.map((r) => String((r as Record<string, unknown>)['QUERY PLAN']));
        await seed(db);
        await pool.query('ANALYZE');
        cleanup = async () => {
          await db.destroy();
          await fresh.drop();
        };
      }
    });
    after(() => cleanup());

    async function planOf(read: () => Promise<unknown>): Promise<{ result: unknown; plan: string }> {
      captured.length = 0;
      const result = await read();
      const q = captured[captured.length - 1];
      assert.ok(q, 'a query was sent');
      return { result, plan: (await explain(q.sql, q.parameters)).join('\n') };
    }
    const tableScan = (plan: string) => /^\s*(?:[|`-]*\s*)?SCAN (grants|agents)\b(?! USING)/m.test(plan) || /Seq Scan on (grants|agents)\b/.test(plan);

    it('revoked grants: one range of grants_revoked_at, first page and later pages', async (t) => {
      const first = await planOf(() => grantsRepo(db).listRevoked(NOW, { limit: 2000 }));
      assert.deepEqual((first.result as { id: string }[]).map((g) => g.id).sort(), Array.from({ length: 5 }, (_, k) => `gr_plan${OLD + k}`).sort());
      assert.match(first.plan, /grants_revoked_at/);
      assert.equal(tableScan(first.plan), false, first.plan);
      const next = await planOf(() => grantsRepo(db).listRevoked(NOW, { after: { revokedAt: NOW - 1000, id: `gr_plan${OLD + 1}` }, limit: 2000 }));
      assert.equal((next.result as unknown[]).length, 3);
      assert.match(next.plan, /grants_revoked_at/);
      assert.equal(tableScan(next.plan), false, next.plan);
      t.diagnostic(`first page:\n${first.plan}\nnext page:\n${next.plan}`);
    });

    it('agents: flagged live agents, agents blocked by their operator, and removals and unblocks of the window, each a range of its own index, first page and later pages', async (t) => {
      const all = (await agentsRepo(db).listRevoked(NOW)).map((a) => a.id);
      const blocked = Array.from({ length: 20 }, (_, i) => `ag_plan_${7000 + i}`);
      assert.deepEqual([...all].sort(), [...Array.from({ length: 50 }, (_, i) => `ag_plan_${6000 + i}`), ...blocked, 'ag_plan_9001', 'ag_plan_9002', 'ag_plan_9003'].sort());
      const plans: string[] = [];
      for (const [reason, index, after] of [
        ['flagged', 'agents_flagged_live', 'ag_plan_6010'],
        ['blocked', 'agents_blocked_live', 'ag_plan_7005'],
        ['removed', 'agents_removed_at', 'ag_plan_9001'],
        ['unblocked', 'agents_unblocked_at', 'ag_plan_9002'],
      ] as const) {
        const first = await planOf(() => agentsRepo(db).listRevoked(NOW, { reason, limit: 1000 }));
        const from = (first.result as RevokedAgentRow[]).find((a) => a.id === after);
        assert.ok(from, `${reason}: ${after} is read`);
        const next = await planOf(() => agentsRepo(db).listRevoked(NOW, { reason, after: from, limit: 1000 }));
        for (const p of [first.plan, next.plan]) {
          assert.match(p, new RegExp(index), `${reason}: ${p}`);
          assert.equal(tableScan(p), false, p);
        }
        plans.push(`${reason}:\n${first.plan}\nnext page:\n${next.plan}`);
      }
      t.diagnostic(plans.join('\n'));
    });

    it('the window is 600 s + 120 s', () => {
      assert.equal(LISTED_FOR_MS, 720_000);
    });
  });
}
