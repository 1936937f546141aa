import { closeSync, fdatasyncSync, openSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import type { StandingRow } from '../repos/agents.ts';
import type { SingleUseItem } from '../ports.ts';
import { CONSUME, READ_STANDING } from './hot-statements.ts';
import type { WithId } from '../../threads/worker-client.ts';

/**
 * The thread that writes cloud verify's single-use keys (DPoP jtis, step-up tokens) to the embedded
 * database, on a connection of its own (hot-path.ts explains why). Each message is one batch: one
 * `BEGIN IMMEDIATE ... COMMIT` with every key, the flush of the WAL file to disk, then the answer.
 * Here the thread may wait, for the disk and for the write lock: on the event loop the same work
 * stood still about 60 µs per verification (measured: bench/README.md).
 */

export interface ConsumeRequest {
  items: readonly SingleUseItem[];
  now: number;
  /** When given, also read these (agent, grant) standings, in the same transaction. */
  pairs?: readonly { agentId: string; grantId: string }[];
}

export type WorkerReply =
  | { id: number; won: boolean[]; rows: StandingRow[] }
  | { id: number; error: { message: string; code?: string } };

export interface WorkerInput {
  path: string;
  /** How long a batch waits for another connection's write transaction, at most (ms). */
  busyTimeoutMs: number;
}

const input = workerData as WorkerInput;
const port = parentPort;
if (port === null) throw new Error('verify-worker.ts runs as a worker thread');

const db = new SQLite(input.path, { timeout: input.busyTimeoutMs });
db.pragma('journal_mode = WAL');
// NORMAL writes a commit's WAL frames without flushing them; the flush follows the commit, outside
// the write lock (other writers wait less), and before the answer: as durable as FULL.
db.pragma('synchronous = NORMAL');
const readStanding = db.prepare<[string, string], StandingRow>(READ_STANDING);
const consume = db.prepare<[string, string, number, number], { won: number }>(CONSUME);
const batch = db.transaction((r: ConsumeRequest) => {
  const rows: StandingRow[] = [];
  for (const { agentId, grantId } of r.pairs ?? []) {
    const row = readStanding.get(grantId, agentId);
    if (row !== undefined) rows.push(row);
  }
  // A key listed twice: its second INSERT meets the first one's row, not expired: false.
  const won = r.items.map((i) => consume.get(i.namespace, i.key, i.expiresAt, r.now) !== undefined);
  return { won, rows };
});

// The WAL file stays the same file while this connection is open (SQLite deletes it only when the
// last connection closes), so one descriptor serves; opened at the first commit, which creates it.
let walFd: number | undefined;

port.on('message', (r: WithId<ConsumeRequest> | 'close') => {
  if (r === 'close') {
    if (walFd !== undefined) closeSync(walFd);
    db.close();
    port.close();
    return;
  }
  let reply: WorkerReply;
  try {
    const { won, rows } = batch.immediate(r);
    walFd ??= openSync(`${input.path}-wal`, 'r+');
    fdatasyncSync(walFd);
    reply = { id: r.id, won, rows };
  } catch (e) {
    const err = e as { message?: unknown; code?: unknown };
    reply = { id: r.id, error: { message: String(err.message ?? e), ...(typeof err.code === 'string' ? { code: err.code } : {}) } };
  }
  port.postMessage(reply);
});
