import { parentPort, workerData } from 'node:worker_threads';
import type { StandingRow } from '../repos/agents.ts';
import type { SingleUseItem } from '../ports/index.ts';
import { CONSUME, READ_STANDING } from './hot-statements.ts';
import { type CommitReply, type CommitThreadInput, commitConnection, serveCommits } from './commit-thread.ts';

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

export type WorkerReply = CommitReply<{ won: boolean[]; rows: StandingRow[] }>;
export type WorkerInput = CommitThreadInput;

const input = workerData as WorkerInput;
const port = parentPort;
if (port === null) throw new Error('verify-worker.ts runs as a worker thread');

const db = commitConnection(input);
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

serveCommits(port, db, input, batch);
