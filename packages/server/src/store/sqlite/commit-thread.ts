import { closeSync, fdatasyncSync, openSync } from 'node:fs';
import type { MessagePort } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import type { WithId } from '../../threads/worker-client.ts';

/**
 * What SQLite's commit threads share (verify-worker.ts: cloud verify's single-use keys;
 * pass-worker.ts: pass issuances): a connection of their own, and one loop that commits each batch
 * the main thread sends, flushes the WAL file to disk, and only then answers.
 */

export interface CommitThreadInput {
  path: string;
  /** How long a batch waits for another connection's write transaction, at most (ms). */
  busyTimeoutMs: number;
}

/** A batch's answer (`{id, ...what the commit returned}`), or the error that ended it. */
export type CommitReply<Out extends object> = ({ id: number } & Out) | { id: number; error: { message: string; code?: string } };

/**
 * The thread's connection. NORMAL writes a commit's WAL frames without flushing them; the flush
 * follows the commit, outside the write lock (other writers wait less), and before the answer: as
 * durable as FULL.
 */
export function commitConnection(input: CommitThreadInput): SQLite.Database {
  const db = new SQLite(input.path, { timeout: input.busyTimeoutMs });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  return db;
}

/**
 * Serves the main thread's batches on `port`: `commit` (a `db.transaction(...)`) runs each in one
 * `BEGIN IMMEDIATE ... COMMIT`, the WAL is flushed, then `{id, ...result}` is answered; an error is
 * answered with its message and code. `'close'` closes the connection and the port.
 */
export function serveCommits<Req extends object, Out extends object>(port: MessagePort, db: SQLite.Database, input: CommitThreadInput, commit: SQLite.Transaction<(r: Req) => Out>): void {
  // The WAL file stays the same file while this connection is open (SQLite deletes it only when the
  // last connection closes), so one descriptor serves; opened at the first commit, which creates it.
  let walFd: number | undefined;
  port.on('message', (r: WithId<Req> | 'close') => {
    if (r === 'close') {
      if (walFd !== undefined) closeSync(walFd);
      db.close();
      port.close();
      return;
    }
    let reply: CommitReply<Out>;
    try {
      const out = commit.immediate(r);
      walFd ??= openSync(`${input.path}-wal`, 'r+');
      fdatasyncSync(walFd);
      reply = { id: r.id, ...out };
    } catch (e) {
      const err = e as { message?: unknown; code?: unknown };
      reply = { id: r.id, error: { message: String(err.message ?? e), ...(typeof err.code === 'string' ? { code: err.code } : {}) } };
    }
    port.postMessage(reply);
  });
}
