import type { Worker } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import type { Selectable } from 'kysely';
import type { AgentsRepo, GrantsRepo, PassIssuanceBatch } from '../ports/index.ts';
import type { AgentsTable, GrantsTable } from '../schema.ts';
import { agentFromRow } from '../repos/agents.ts';
import { grantFromRow } from '../repos/grants.ts';
import { whenNotBusy } from './hot-path.ts';
import { siblingModule, startWorker } from '../../threads/start-worker.ts';
import { workerClient } from '../../threads/worker-client.ts';
import type { PassWorkerInput, PassWorkerReply, PassWorkerRequest } from './pass-worker.ts';

/** How long a batch waits for another connection's write transaction, at most (as sqlite/hot-path.ts). */
const BUSY_DEADLINE_MS = 5000;

export interface SqlitePassIssuance {
  batch: PassIssuanceBatch;
  activeFor: GrantsRepo['activeFor'];
  agentById: AgentsRepo['byId'];
  close(): Promise<void>;
}

/** Starts pass-worker.ts on `input` (tests start it through their own function, to stop it). */
export const startPassWorker = (input: PassWorkerInput): Worker => startWorker(siblingModule('./pass-worker', import.meta.url), input);

/**
 * Pass issuance commits on the embedded database file, on a worker thread with a connection of its
 * own (pass-worker.ts): the main connection is shared with Kysely transactions that stay open across
 * awaits (sqlite/hot-path.ts explains why that rules it out), and there the thread may wait for the
 * write lock and the disk while the event loop goes on. A worker that stops fails its batch (its
 * callers get an error, never an issued pass) and is replaced on the next batch (worker-client.ts).
 *
 * The two reads of every token call (the agent, the grant) run here on the driver, on a connection
 * of their own that only reads (as sqlite/hot-path.ts's: in WAL mode a read never waits for a
 * writer, and one told "busy" is tried again on a timer): through Kysely each one was built,
 * compiled and handed through its connection queue on the event loop.
 */
export function sqlitePassIssuance(path: string, spawn = startPassWorker, onRestart?: () => void): SqlitePassIssuance {
  const client = workerClient<PassWorkerRequest, PassWorkerReply>(() => spawn({ path, busyTimeoutMs: BUSY_DEADLINE_MS }), 'SQLite pass issuance', onRestart);
  const reader = new SQLite(path, { timeout: 0 });
  // As repos/agents.ts (byId) and repos/grants.ts (activeFor).
  const agent = reader.prepare<[string], Selectable<AgentsTable>>('SELECT * FROM agents WHERE id = ?');
  const activeGrant = reader.prepare<[string, string], Selectable<GrantsTable>>(
    `SELECT * FROM grants WHERE agent_id = ? AND site = ? AND resource IS NULL AND status = 'active' ORDER BY created_at DESC LIMIT 1`,
  );
  return {
    agentById: (id) =>
      whenNotBusy(() => {
        const row = agent.get(id);
        return row && agentFromRow(row);
      }),
    activeFor: (agentId, site) =>
      whenNotBusy(() => {
        const row = activeGrant.get(agentId, site);
        return row && grantFromRow(row);
      }),
    async batch(items) {
      if (items.length === 0) return [];
      const reply = await client.send({ items });
      if ('error' in reply) throw Object.assign(new Error(reply.error.message), reply.error.code === undefined ? {} : { code: reply.error.code });
      return reply.outcomes;
    },
    async close() {
      // Batches already sent are answered first: the worker handles messages in order.
      await client.close('close', BUSY_DEADLINE_MS);
      reader.close();
    },
  };
}
