import { Worker } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import type { HotPath } from '../hot-path.ts';
import { type StandingRow, standingsFor } from '../repos/agents.ts';
import { READ_STANDING } from './hot-statements.ts';
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
 * - Other reads (AgentsRepo.withGrant outside verify) run here, on a read-only connection: in WAL
 *   mode a read never waits for a writer. Its connection has no busy timeout (SQLite's busy handler
 *   sleeps, which here would stop the event loop); in the rare cases a read is told "busy" (the
 *   WAL being reset), it is tried again on a timer.
 */
export function sqliteHotPath(path: string): HotPath {
  const db = new SQLite(path, { timeout: 0 });
  const readStanding = db.prepare<[string, string], StandingRow>(READ_STANDING);
  const writer = verifyWorker({ path, busyTimeoutMs: BUSY_DEADLINE_MS });

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
      const { won, rows } = await writer.send({ items: batch.map((q) => q.jti), now: Math.min(...batch.map((q) => q.now)), pairs });
      const standings = standingsFor(rows, pairs);
      return batch.map((_, i) => ({ standing: standings[i], fresh: won[i] === true }));
    },
    async close() {
      await writer.close();
      db.close();
    },
  };
}

/**
 * Starts verify-worker.ts. The service runs its TypeScript through tsx (`node --import tsx`), whose
 * loader a worker thread does not inherit (Node 20): the worker registers it before loading the file.
 */
const WORKER_BOOT = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => {
  tsx.register();
  return import(${JSON.stringify(new URL('./verify-worker.ts', import.meta.url).href)});
});`;

type Pending = { resolve: (r: { won: boolean[]; rows: StandingRow[] }) => void; reject: (e: Error) => void };

/** Starts verify-worker.ts on `input` (tests start it through their own function, to stop it). */
export const startVerifyWorker = (input: WorkerInput): Worker => new Worker(WORKER_BOOT, { eval: true, workerData: input });

/**
 * The main thread's side of verify-worker.ts: one request per batch, answered in any order by id. A
 * worker that stops fails every batch in flight, and the next batch starts a new one.
 */
export function verifyWorker(input: WorkerInput, spawn = startVerifyWorker) {
  const pending = new Map<number, Pending>();
  let nextId = 1;
  let worker: Worker | undefined;
  let closing = false;

  const failAll = (e: Error) => {
    for (const p of pending.values()) p.reject(e);
    pending.clear();
  };
  // Referenced only while a batch is out: an idle worker must not keep a process alive, a busy one
  // must (its callers are waiting).
  const settle = (w: Worker, id: number) => {
    const p = pending.get(id);
    pending.delete(id);
    if (pending.size === 0) w.unref();
    return p;
  };
  const start = (): Worker => {
    const w = spawn(input);
    w.unref();
    w.on('message', (reply: WorkerReply) => {
      const p = settle(w, reply.id);
      if (p === undefined) return;
      if ('error' in reply) p.reject(Object.assign(new Error(reply.error.message), reply.error.code === undefined ? {} : { code: reply.error.code }));
      else p.resolve(reply);
    });
    w.on('error', (e) => failAll(e));
    w.on('exit', (code) => {
      if (worker === w) worker = undefined;
      failAll(new Error(`the SQLite verify worker stopped (exit code ${code})`));
    });
    return w;
  };

  return {
    send(r: Omit<ConsumeRequest, 'id'>): Promise<{ won: boolean[]; rows: StandingRow[] }> {
      if (closing) return Promise.reject(new Error('the store is closed'));
      worker ??= start();
      const id = nextId++;
      const w = worker;
      return new Promise((resolve, reject) => {
        if (pending.size === 0) w.ref();
        pending.set(id, { resolve, reject });
        w.postMessage({ ...r, id } satisfies ConsumeRequest);
      });
    },
    async close() {
      closing = true;
      const w = worker;
      if (w === undefined) return;
      // Batches already sent are answered first: the worker handles messages in order.
      const exited = new Promise((r) => w.once('exit', r));
      w.ref();
      w.postMessage('close');
      await Promise.race([exited, new Promise((r) => setTimeout(r, BUSY_DEADLINE_MS).unref())]);
      await w.terminate();
    },
  };
}

/** Runs `work` now, or again on a timer while the database is busy. */
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
