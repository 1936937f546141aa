import SQLite from 'better-sqlite3';
import type { HotPath } from '../hot-path.ts';
import { type StandingRow, standingsFor } from '../repos/agents.ts';

/** Exported for the benchmark's query plans. */
export const READ_STANDING = `SELECT a.id, a.name, a.status, a.flag, g.id AS grant_id, g.agent_id AS grant_agent_id, g.site AS grant_site, g.status AS grant_status
FROM agents a LEFT JOIN grants g ON g.id = ? AND g.agent_id = a.id WHERE a.id = ?`;

// An entry that has expired is taken over (as in repos/single-use.ts); RETURNING answers a row only
// when this statement inserted or took over the key.
const CONSUME = `INSERT INTO single_use (namespace, key, expires_at) VALUES (?, ?, ?)
ON CONFLICT (namespace, key) DO UPDATE SET expires_at = excluded.expires_at WHERE single_use.expires_at <= ? RETURNING 1 AS won`;

/** How long a statement waits for the main connection to finish a write transaction, at most. */
const BUSY_DEADLINE_MS = 5000;

/**
 * Cloud verify's statements on a connection of their own to the same database file, run straight on
 * better-sqlite3 (see HotPath). A connection of its own because the main one is shared with Kysely,
 * whose transactions stay open across awaits: a statement sent on that connection meanwhile would
 * become part of someone else's transaction (and be rolled back with it).
 *
 * Both run synchronously from start to commit, so nothing else in this process runs in between.
 * The consumption of a batch is one `BEGIN IMMEDIATE ... COMMIT` (one fsync with synchronous=FULL).
 * Its connection has no busy timeout: SQLite's busy handler sleeps, which here would stop the event
 * loop, and with it the Kysely transaction holding the write lock (a 5 s stall, then an error).
 * Instead, while another write transaction is open the batch retries on a timer, yielding the loop.
 * Reads never wait in WAL mode.
 */
export function sqliteHotPath(path: string): HotPath {
  const db = new SQLite(path, { timeout: 0 });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  const readStanding = db.prepare<[string, string], StandingRow>(READ_STANDING);
  const consume = db.prepare<[string, string, number, number], { won: number }>(CONSUME);
  const consumeAll = db.transaction((items: readonly { namespace: string; key: string; expiresAt: number }[], now: number) =>
    items.map((i) => consume.get(i.namespace, i.key, i.expiresAt, now) !== undefined));

  return {
    withGrants: (pairs) =>
      whenNotBusy(() => {
        const rows: StandingRow[] = [];
        for (const { agentId, grantId } of pairs) {
          const row = readStanding.get(grantId, agentId);
          if (row !== undefined) rows.push(row);
        }
        return standingsFor(rows, pairs);
      }),
    // A key listed twice: its second INSERT meets the first one's row, not expired: false.
    consumeMany: (items, now) => whenNotBusy(() => (items.length === 0 ? [] : consumeAll.immediate(items, now))),
    async close() {
      db.close();
    },
  };
}

/** Runs `work` now, or again on a timer while the database is busy (another connection writing or checkpointing). */
async function whenNotBusy<T>(work: () => T): Promise<T> {
  const deadline = Date.now() + BUSY_DEADLINE_MS;
  for (let wait = 1; ; wait = Math.min(wait * 2, 20)) {
    try {
      return work();
    } catch (e) {
      if (!isBusy(e) || Date.now() >= deadline) throw e;
    }
    await new Promise((r) => setTimeout(r, wait));
  }
}

function isBusy(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return code === 'SQLITE_BUSY' || code === 'SQLITE_BUSY_SNAPSHOT';
}
