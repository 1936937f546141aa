import type { Worker } from 'node:worker_threads';

/** A message to a worker thread; it answers each with the same `id`. */
export type WithId<T> = T & { id: number };

export interface WorkerClient<Req, Rep> {
  /** Sends `request`; resolves with the worker's answer to it. */
  send(request: Req): Promise<Rep>;
  /**
   * Sends `goodbye` (the worker then finishes what it was sent, cleans up and exits) and waits for
   * the exit, at most `waitMs`; later sends are refused.
   */
  close(goodbye: unknown, waitMs: number): Promise<void>;
}

/**
 * The main thread's side of a request/answer worker thread, started on first use. Answers are
 * matched by id, in any order. A worker that stops fails every request it held (none is left
 * waiting), and the next request starts a new one. The worker is referenced only while requests
 * are out: an idle worker does not keep a process alive, a busy one does (its callers are waiting).
 */
export function workerClient<Req extends object, Rep extends { id: number }>(spawn: () => Worker, name: string, onRestart?: () => void): WorkerClient<Req, Rep> {
  const pending = new Map<number, { resolve: (r: Rep) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  let worker: Worker | undefined;
  let closed = false;

  const failAll = (e: Error) => {
    for (const p of pending.values()) p.reject(e);
    pending.clear();
  };
  let started = false;
  const start = (): Worker => {
    // Every start after the first replaces a worker that stopped (`onRestart`: the metrics count them).
    if (started) onRestart?.();
    started = true;
    const w = spawn();
    w.unref();
    w.on('message', (reply: Rep) => {
      const p = pending.get(reply.id);
      if (p === undefined) return;
      pending.delete(reply.id);
      if (pending.size === 0) w.unref();
      p.resolve(reply);
    });
    w.on('error', (e) => failAll(e));
    w.on('exit', (code) => {
      if (worker === w) worker = undefined;
      failAll(new Error(`the ${name} worker thread stopped (exit code ${code})`));
    });
    return w;
  };

  return {
    send(request) {
      if (closed) return Promise.reject(new Error(`the ${name} worker thread is closed`));
      const w = (worker ??= start());
      const id = nextId++;
      return new Promise((resolve, reject) => {
        if (pending.size === 0) w.ref();
        pending.set(id, { resolve, reject });
        w.postMessage({ ...request, id });
      });
    },
    async close(goodbye, waitMs) {
      closed = true;
      const w = worker;
      if (w === undefined) return;
      const exited = new Promise((r) => w.once('exit', r));
      w.ref();
      w.postMessage(goodbye);
      await Promise.race([exited, new Promise((r) => setTimeout(r, waitMs).unref())]);
      await w.terminate();
    },
  };
}
