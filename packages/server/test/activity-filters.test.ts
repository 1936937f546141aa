import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, PostgresDialect, SqliteDialect, sql, type LogEvent } from 'kysely';
import { migrate } from '../src/store/migrations/index.ts';
import { activityRepo } from '../src/store/repos/activity.ts';
import type { ActivityQuery, ActivityRecord, Dialect } from '../src/store/ports/index.ts';
import type { Database } from '../src/store/schema.ts';
import type { Db } from '../src/store/repos/db.ts';
import { freshPostgresDatabase } from './helpers/postgres.ts';

// Issue 14, item 6: every filter of GET /api/activity, alone and combined, must be one range read of
// the index made for exactly those filters, walked in order, so a filtered page costs the same at 1k
// and at 1M records, also when the filter matches almost nothing (an unindexed filter reads the
// owner's whole trail to find 51 rows) and when the columns go together, which misleads PostgreSQL's
// estimates. Checked on the plans both databases choose for what the repository sends, and on the
// answers.

const OWNER = 'u_filters_owner';
const OTHER = 'u_filters_other';
const RECORDS = 30_000;
const OTHER_RECORDS = 6_000;
/** One record in RARE_EVERY is the rare kind: agent ag_0 writing an agent.note for rare.example. */
const RARE_EVERY = 5_000;
const ACTIONS = ['pass.issued', 'request.approved', 'stepup.used', 'request.created', 'grant.revoked'];

type Row = Omit<ActivityRecord, 'detail'> & { detail: string };

/**
 * Records i = 0.. of one owner: 20 agents and 5 actions in turns, most records for main.example and
 * one in 13 for s1.example (all combinations occur), some without agent or site; and, as in real
 * trails, columns that go together: the agent of one record in 50 (ag_corr) only ever visits
 * corr.example. Statistics that take columns as independent expect ag_corr + main.example to match
 * nearly all of ag_corr's records; it matches none.
 */
function recordOf(userId: string, i: number): Row {
  const rare = i % RARE_EVERY === 17;
  const corr = i % 50 === 23;
  return {
    seq: i + 1,
    userId,
    agentId: rare ? 'ag_0' : corr ? 'ag_corr' : i % 10 === 9 ? null : `ag_${i % 20}`,
    site: rare ? 'rare.example' : corr ? 'corr.example' : i % 40 === 39 ? null : i % 13 === 1 ? 's1.example' : 'main.example',
    action: rare ? 'agent.note' : (ACTIONS[i % ACTIONS.length] ?? 'pass.issued'),
    detail: JSON.stringify({ i }),
    ip: null,
    createdAt: 1_700_000_000_000 + i,
  };
}

type FilterName = 'agentId' | 'site' | 'action';
const FILTERS: readonly FilterName[] = ['agentId', 'site', 'action'];
const COLUMN: Record<FilterName, string> = { agentId: 'agent_id', site: 'site', action: 'action' };
/** Every combination the route offers: each filter present or not. */
const COMBINATIONS: FilterName[][] = [0, 1, 2, 3, 4, 5, 6, 7].map((bits) => FILTERS.filter((_, k) => (bits >> k) & 1));
/** The index each combination must read (migrations 005 and 013). */
const INDEX: Record<string, string> = {
  '': 'activity_user_owner_seq',
  agentId: 'activity_user_agent_seq',
  site: 'activity_user_site_seq',
  action: 'activity_user_action_seq',
  'agentId+site': 'activity_user_agent_site_seq',
  'agentId+action': 'activity_user_agent_action_seq',
  'site+action': 'activity_user_site_action_seq',
  'agentId+site+action': 'activity_user_agent_site_action_seq',
};
/** Values per kind: often matched, rarely (the rare records, or a combination that seldom occurs), never, and columns that go together. */
const VALUES: Record<string, Record<FilterName, string>> = {
  common: { agentId: 'ag_1', site: 's1.example', action: 'request.approved' },
  rare: { agentId: 'ag_0', site: 'rare.example', action: 'agent.note' },
  absent: { agentId: 'ag_none', site: 'none.example', action: 'agent.none' },
  correlated: { agentId: 'ag_corr', site: 'main.example', action: 'request.approved' },
};

const queryOf = (combo: readonly FilterName[], kind: string, beforeSeq: number, limit = 51): ActivityQuery => {
  const q: ActivityQuery = { before: beforeSeq, limit };
  for (const f of combo) q[f] = VALUES[kind]?.[f];
  return q;
};
const label = (combo: readonly FilterName[], kind: string, beforeSeq: number) =>
  `${combo.join('+') || 'no filter'} (${kind}${beforeSeq > 0 ? `, before=${beforeSeq}` : ''})`;

type Sent = { sql: string; parameters: readonly unknown[] };

interface Fixture {
  db: Kysely<Database>;
  /** Runs one repository call and answers the plan of its page read, in the session state it ran in. */
  planOf(call: () => Promise<unknown>): Promise<string[]>;
  analyze(): Promise<void>;
  close(): Promise<void>;
}

async function seed(db: Kysely<Database>): Promise<void> {
  const rows = [...Array.from({ length: RECORDS }, (_, i) => recordOf(OWNER, i)), ...Array.from({ length: OTHER_RECORDS }, (_, i) => recordOf(OTHER, i))];
  for (let k = 0; k < rows.length; k += 500) {
    await db
      .insertInto('activity')
      .values(rows.slice(k, k + 500).map((r) => ({ user_id: r.userId, owner_seq: r.seq, agent_id: r.agentId, site: r.site, action: r.action, detail: r.detail, ip: r.ip, created_at: r.createdAt })))
      .execute();
  }
}

async function openFixture(backend: Dialect): Promise<Fixture> {
  const captured: Sent[] = [];
  const log = (e: LogEvent) => {
    if (e.level === 'query') captured.push({ sql: e.query.sql, parameters: e.query.parameters });
  };
  /** What one call sent: the page read, and the statements before it in its transaction (planner settings). */
  const capture = async (call: () => Promise<unknown>): Promise<{ read: Sent; before: Sent[] }> => {
    captured.length = 0;
    await call();
    const sent = captured.filter((q) => !/^(begin|commit|rollback)$/i.test(q.sql.trim()));
    const read = sent.findLast((q) => /\bfrom activity\b/i.test(q.sql));
    assert.ok(read, 'a page read was sent');
    return { read, before: sent.slice(0, sent.indexOf(read)) };
  };
  if (backend === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'mandate-activity-filters-'));
    const database = new SQLite(join(dir, 'm.db'));
    database.pragma('journal_mode = WAL');
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }), log });
    await migrate(db as Kysely<unknown>, 'sqlite');
    await seed(db);
    return {
      db,
      planOf: async (call) => {
        const { read, before: setup } = await capture(call);
        assert.deepEqual(setup, [], 'SQLite: one statement per page');
        return database.prepare(`EXPLAIN QUERY PLAN ${read.sql}`).all(...(read.parameters as unknown[])).map((r) => String((r as { detail: unknown }).detail));
      },
      analyze: async () => void database.exec('ANALYZE'),
      close: async () => {
        await db.destroy();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const fresh = await freshPostgresDatabase();
  const pool = new pg.Pool({ connectionString: fresh.url, max: 2 });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log });
  await migrate(db as Kysely<unknown>, 'postgres');
  await seed(db);
  return {
    db,
    planOf: async (call) => {
      // Explained as it ran: in a transaction, after the statements the repository sent before it.
      const { read, before: setup } = await capture(call);
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        for (const q of setup) await client.query(q.sql, q.parameters as unknown[]);
        return (await client.query(`EXPLAIN ${read.sql}`, read.parameters as unknown[])).rows.map((r) => String((r as Record<string, unknown>)['QUERY PLAN']));
      } finally {
        await client.query('ROLLBACK');
        client.release();
      }
    },
    analyze: async () => void (await sql`ANALYZE activity`.execute(db)),
    close: async () => {
      await db.destroy();
      await fresh.drop();
    },
  };
}

/** SQLite: one index search on the combination's index, every filter an equality of the index, nothing sorted afterwards. */
function checkSqlitePlan(plan: string[], combo: readonly FilterName[], beforeSeq: number, what: string): void {
  const text = plan.join('\n');
  assert.equal(plan.length, 1, `${what}: one step expected:\n${text}`);
  const m = /^SEARCH activity USING (?:COVERING )?INDEX (\w+) \((.*)\)$/.exec(plan[0] ?? '');
  assert.ok(m, `${what}: an index search expected:\n${text}`);
  assert.equal(m[1], INDEX[combo.join('+')], `${what}: wrong index:\n${text}`);
  const terms = (m[2] ?? '').split(' AND ').sort();
  // The order key is owner_seq without filters, else an expression (owner_seq + number of filters).
  const bound = combo.length === 0 ? 'owner_seq<?' : '<expr><?';
  const expected = ['user_id=?', ...combo.map((f) => `${COLUMN[f]}=?`), ...(beforeSeq > 0 ? [bound] : [])].sort();
  assert.deepEqual(terms, expected, `${what}: every filter must be a term of the index:\n${text}`);
  assert.doesNotMatch(text, /SCAN activity|TEMP B-TREE/, `${what}:\n${text}`);
}

/** PostgreSQL: one index scan (backward, for newest first) on the combination's index, all conditions in it, no sort and no filter afterwards. */
function checkPostgresPlan(plan: string[], combo: readonly FilterName[], beforeSeq: number, what: string): void {
  const text = plan.join('\n');
  const scans = plan.filter((l) => /Scan/.test(l));
  assert.equal(scans.length, 1, `${what}: one scan expected:\n${text}`);
  const m = /Index (?:Only )?Scan(?: Backward)? using (\w+) on activity/.exec(scans[0] ?? '');
  assert.ok(m, `${what}: an index scan expected:\n${text}`);
  assert.equal(m[1], INDEX[combo.join('+')], `${what}: wrong index:\n${text}`);
  assert.doesNotMatch(text, /Seq Scan|Bitmap|Sort|Filter:/, `${what}:\n${text}`);
  const cond = plan.find((l) => l.includes('Index Cond:')) ?? '';
  const terms = ['user_id =', ...combo.map((f) => `${COLUMN[f]} =`), ...(beforeSeq > 0 ? [combo.length === 0 ? 'owner_seq <' : `(owner_seq + ${combo.length}) <`] : [])];
  for (const term of terms) assert.ok(cond.includes(term), `${what}: ${term} must be in the index condition:\n${text}`);
}

/** What the repository must answer, from the seeded rows. */
function expectedSeqs(combo: readonly FilterName[], kind: string, beforeSeq: number): number[] {
  const out: number[] = [];
  for (let i = RECORDS - 1; i >= 0; i--) {
    const r = recordOf(OWNER, i);
    if (beforeSeq > 0 && r.seq >= beforeSeq) continue;
    if (combo.every((f) => r[f] === VALUES[kind]?.[f])) out.push(r.seq);
  }
  return out;
}

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`activity filters: index range reads and answers (${backend})`, () => {
    let f: Fixture;
    before(async () => {
      f = await openFixture(backend);
      // PostgreSQL plans from statistics, which autovacuum gathers soon after a bulk write; SQLite
      // has none until someone runs ANALYZE (the service never does), and is checked both ways.
      if (backend === 'postgres') await f.analyze();
    });
    after(() => f.close());

    const checkPlans = async () => {
      const repo = activityRepo(f.db, backend);
      // Every plan is checked before failing, so a failure lists all the bad ones.
      const bad: string[] = [];
      for (const combo of COMBINATIONS) {
        for (const kind of Object.keys(VALUES)) {
          for (const beforeSeq of [0, RECORDS / 2]) {
            const plan = await f.planOf(() => repo.list(OWNER, queryOf(combo, kind, beforeSeq)));
            const what = label(combo, kind, beforeSeq);
            try {
              if (backend === 'sqlite') checkSqlitePlan(plan, combo, beforeSeq, what);
              else checkPostgresPlan(plan, combo, beforeSeq, what);
            } catch (e) {
              bad.push((e as Error).message);
            }
          }
        }
      }
      if (bad.length > 0) assert.fail(`${bad.length} plans are not a range read of their index:\n\n${bad.join('\n\n')}`);
    };

    it(`every filter and combination reads its own index, ordered by owner_seq (${backend === 'sqlite' ? 'no statistics' : 'after ANALYZE'})`, checkPlans);

    if (backend === 'sqlite') {
      it('the same plans after ANALYZE (statistics gathered)', async () => {
        await f.analyze();
        await checkPlans();
      });
    }

    it('answers every filter and combination newest first, paged with before', async () => {
      const repo = activityRepo(f.db, backend);
      const limit = 7;
      for (const combo of COMBINATIONS) {
        for (const kind of Object.keys(VALUES)) {
          for (const start of [0, RECORDS / 2 + 3]) {
            const all = expectedSeqs(combo, kind, start);
            const what = label(combo, kind, start);
            if (kind === 'absent' && combo.length > 0) assert.deepEqual(all, [], what);
            // Up to 6 pages, each asking for the next with `before` = the last seq of the page before.
            const got: number[] = [];
            let cursor = start;
            for (let p = 0; p < 6; p++) {
              const page = await repo.list(OWNER, queryOf(combo, kind, cursor, limit));
              assert.ok(page.length <= limit, what);
              for (const r of page) {
                assert.equal(r.userId, OWNER, what);
                for (const fl of combo) assert.equal(r[fl], VALUES[kind]?.[fl], what);
                assert.deepEqual(r.detail, { i: r.seq - 1 }, what);
              }
              got.push(...page.map((r) => r.seq));
              const lastRow = page[page.length - 1];
              if (page.length < limit || !lastRow) break;
              cursor = lastRow.seq;
            }
            assert.deepEqual(got, all.slice(0, got.length), what);
            assert.equal(got.length, Math.min(all.length, 6 * limit), what);
          }
        }
      }
    });

    it('the rare records are found wherever they are: every one of them, across pages', async () => {
      const repo = activityRepo(f.db, backend);
      const rare = expectedSeqs(['agentId', 'site', 'action'], 'rare', 0);
      assert.equal(rare.length, RECORDS / RARE_EVERY);
      for (const combo of COMBINATIONS.filter((c) => c.includes('site'))) {
        const got: number[] = [];
        let cursor = 0;
        for (;;) {
          const page = await repo.list(OWNER, queryOf(combo, 'rare', cursor, 2));
          got.push(...page.map((r) => r.seq));
          const lastRow = page[page.length - 1];
          if (page.length < 2 || !lastRow) break;
          cursor = lastRow.seq;
        }
        assert.deepEqual(got, rare, combo.join('+'));
      }
    });

    if (backend === 'postgres') {
      it("the page's planner settings end with the page: in its own transaction, or restored inside the caller's", async () => {
        const setting = async (db: Db) => (await sql<{ b: string; s: string }>`SELECT current_setting('enable_bitmapscan') AS b, current_setting('enable_sort') AS s`.execute(db)).rows[0];
        assert.deepEqual(await setting(f.db), { b: 'on', s: 'on' });
        await activityRepo(f.db, backend).list(OWNER, queryOf(['site'], 'rare', 0));
        assert.deepEqual(await setting(f.db), { b: 'on', s: 'on' });
        await f.db.transaction().execute(async (tx) => {
          await sql`SELECT set_config('enable_sort', 'off', true)`.execute(tx);
          const page = await activityRepo(tx, backend).list(OWNER, queryOf(['site'], 'rare', 0));
          assert.equal(page.length, RECORDS / RARE_EVERY);
          assert.deepEqual(await setting(tx), { b: 'on', s: 'off' }, "the caller's own value stays");
        });
      });
    }

    it("never answers another owner's records, whatever the filter", async () => {
      const repo = activityRepo(f.db, backend);
      for (const combo of COMBINATIONS) {
        const page = await repo.list(OTHER, queryOf(combo, 'common', 0, 200));
        assert.ok(page.length > 0, combo.join('+'));
        assert.ok(page.every((r) => r.userId === OTHER), combo.join('+'));
      }
    });
  });
}
