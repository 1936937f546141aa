import type { Worker } from 'node:worker_threads';
import type { PassIssuanceBatch, SignInRotationBatch } from '../ports/index.ts';
import { signInFromRow } from '../repos/oidc-sign-ins.ts';
import { siblingModule, startWorker } from '../../threads/start-worker.ts';
import { workerClient } from '../../threads/worker-client.ts';
import type { PassWorkerInput, PassWorkerReply, PassWorkerRequest } from './pass-worker.ts';

/** How long a batch waits for another connection's write transaction, at most (as sqlite/hot-path.ts). */
const BUSY_DEADLINE_MS = 5000;

export interface SqlitePassIssuance {
  batch: PassIssuanceBatch;
  /** OIDC refresh token rotations, committed on the same thread. */
  rotations: SignInRotationBatch;
  close(): Promise<void>;
}

/** Starts pass-worker.ts on `input` (tests start it through their own function, to stop it). */
export const startPassWorker = (input: PassWorkerInput): Worker => startWorker(siblingModule('./pass-worker', import.meta.url), input);

/**
 * Pass issuances and OIDC refresh token rotations commit on the embedded database file, on a worker
 * thread with a connection of its own (pass-worker.ts): the main connection is shared with Kysely
 * transactions that stay open across awaits (sqlite/hot-path.ts explains why that rules it out), and
 * there the thread may wait for the write lock and the disk while the event loop goes on. A worker
 * that stops fails its batch (its callers get an error, never an issued pass or a rotated token) and
 * is replaced on the next batch (worker-client.ts). The reads of token calls: token-reads.ts.
 */
export function sqlitePassIssuance(path: string, spawn = startPassWorker, onRestart?: () => void): SqlitePassIssuance {
  const client = workerClient<PassWorkerRequest, PassWorkerReply>(() => spawn({ path, busyTimeoutMs: BUSY_DEADLINE_MS }), 'SQLite pass issuance', onRestart);
  const send = async (r: PassWorkerRequest) => {
    const reply = await client.send(r);
    if ('error' in reply) throw Object.assign(new Error(reply.error.message), reply.error.code === undefined ? {} : { code: reply.error.code });
    return reply;
  };
  return {
    async batch(items) {
      if (items.length === 0) return [];
      const reply = await send({ items });
      if (!('outcomes' in reply)) throw new Error('the pass worker answered a pass issuance with rows');
      return reply.outcomes;
    },
    async rotations(rotations) {
      if (rotations.length === 0) return [];
      const reply = await send({ rotations });
      if (!('rows' in reply)) throw new Error('the pass worker answered a rotation with outcomes');
      return reply.rows.map((row) => row && signInFromRow(row));
    },
    // Batches already sent are answered first: the worker handles messages in order.
    close: () => client.close('close', BUSY_DEADLINE_MS),
  };
}
