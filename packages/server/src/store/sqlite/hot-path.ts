import type { Worker } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import type { HotPath } from '../hot-path.ts';
import { type StandingRow, standingsFor } from '../repos/agents.ts';
import { READ_STANDING } from './hot-statements.ts';
import { siblingModule, startWorker } from '../../threads/start-worker.ts';
import { workerClient } from '../../threads/worker-client.ts';
import type { ConsumeRequest, WorkerInput, WorkerReply } from './verify-worker.ts';

/** How long a statement waits for another connection's write transaction, at most. */
const BUSY_DEADLINE_MS = 5000;

/**
 * Cloud verify's statements on connections of their own to the same database file, run straight on
 * better-sqlite3 (see HotPath). Connections of their own because the main one is shared with
 * Kysely, whose transactions stay open across awaits: a statement sent on that connection meanwhile
 * would become part of someone else's transaction (and be rolled back with it).
 *
 * - Writes (single-use keys, and Store.verifyLookup's read with its jtis) go to a worker thread
 *   (verify-worker.ts): one transaction and one flush to disk per batch, answered after both. The
 *   event loop never waits for the disk or for the write lock, which another connection's
 *   transaction may hold for as long as it stays open.
 * - Other reads (AgentsRepo.withGrant outside verify) run here, on a connection that only reads: in
 *   WAL mode a read never waits for a writer. Its connection has no busy timeout (SQLite's busy handler
 *   sleeps, which here would stop the event loop); in the rare cases a read is told "busy" (the
 *   WAL being reset), it is tried again on a timer.
 */
export function sqliteHotPath(path: string, onRestart?: () => void): HotPath {
  const db = new SQLite(path, { timeout: 0 });
  const readStanding = db.prepare<[string, string], StandingRow>(READ_STANDING);
  const writer = verifyWorker({ path, busyTimeoutMs: BUSY_DEADLINE_MS }, startVerifyWorker, onRestart);

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
    consumeMany: async (items, now) => (items.length === 0 ? [] : (await writer.send({ items, now })).won),
    async verifyLookups(batch) {
      if (batch.length === 0) return [];
      const pairs = batch.map((q) => ({ agentId: q.agentId, grantId: q.grantId }));
      // Expired entries are taken over against the earliest clock of the batch (single-use-batching.ts).
      // Each (agent, grant) is read once: a site's requests in one batch mostly come from one agent session.
      const { won, rows } = await writer.send({ items: batch.map((q) => q.jti), now: Math.min(...batch.map((q) => q.now)), pairs: distinctPairs(pairs) });
      const standings = standingsFor(rows, pairs);
      return batch.map((_, i) => ({ standing: standings[i], fresh: won[i] === true }));
    },
    async close() {
      await writer.close();
      db.close();
    },
  };
}

/** The pairs without repeats, in their first order. */
function distinctPairs(pairs: readonly { agentId: string; grantId: string }[]): { agentId: string; grantId: string }[] {
  const seen = new Map<string, { agentId: string; grantId: string }>();
  // Agent and grant ids are the service's own (no NUL), so a NUL can separate the two.
  for (const p of pairs) seen.set(`${p.agentId}\u0000${p.grantId}`, p);
  return [...seen.values()];
}

/** Starts verify-worker.ts on `input` (tests start it through their own function, to stop it). */
export const startVerifyWorker = (input: WorkerInput): Worker => startWorker(siblingModule('./verify-worker', import.meta.url), input);

/** The main thread's side of verify-worker.ts (a worker that stops is replaced: worker-client.ts). */
export function verifyWorker(input: WorkerInput, spawn = startVerifyWorker, onRestart?: () => void) {
  const client = workerClient<ConsumeRequest, WorkerReply>(() => spawn(input), 'SQLite verify', onRestart);
  return {
    async send(r: ConsumeRequest): Promise<{ won: boolean[]; rows: StandingRow[] }> {
      const reply = await client.send(r);
      if ('error' in reply) throw Object.assign(new Error(reply.error.message), reply.error.code === undefined ? {} : { code: reply.error.code });
      return reply;
    },
    // Batches already sent are answered first: the worker handles messages in order.
    close: () => client.close('close', BUSY_DEADLINE_MS),
  };
}

/** Runs `work` now, or again on a timer while the database is busy. */
export async function whenNotBusy<T>(work: () => T): Promise<T> {
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
