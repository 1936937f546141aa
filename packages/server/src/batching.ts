export interface BatchingOptions {
  /** Calls per statement at most. */
  maxBatch?: number;
  /** Statements running at once at most; calls arriving meanwhile wait and go together in the next one. */
  maxInFlight?: number;
}

interface Waiting<I, O> {
  item: I;
  resolve: (out: O) => void;
  reject: (e: unknown) => void;
}

/**
 * Turns a statement over many items (`run`, answering one result per item, in order) into a
 * function of one item. Every call made while the event loop is busy, or while `maxInFlight`
 * statements are already running, goes into the next statement together with the others: N
 * concurrent requests cost one statement (and one commit) instead of N. A lone call on an idle node
 * waits only for the end of the current event-loop turn.
 *
 * No caller is answered before the statement holding its item has finished (so a write is
 * committed, a read reflects the database as of a moment after the call was made); a failed
 * statement fails each of its callers.
 */
export function batched<I, O>(run: (items: I[]) => Promise<O[]>, o: BatchingOptions = {}): (item: I) => Promise<O> {
  const maxBatch = o.maxBatch ?? 256;
  const maxInFlight = o.maxInFlight ?? 1;
  const queue: Waiting<I, O>[] = [];
  let inFlight = 0;
  let scheduled = false;

  const schedule = () => {
    if (scheduled || queue.length === 0 || inFlight >= maxInFlight) return;
    scheduled = true;
    // Runs after the current turn's I/O callbacks: the requests parsed in this turn go together.
    setImmediate(flush);
  };

  const flush = () => {
    scheduled = false;
    while (queue.length > 0 && inFlight < maxInFlight) {
      const batch = queue.splice(0, maxBatch);
      inFlight++;
      // Through a promise, so that even a `run` throwing synchronously fails its callers instead of the process.
      Promise.resolve()
        .then(() => run(batch.map((w) => w.item)))
        .then(
          (outs) => {
            if (outs.length !== batch.length) throw new Error(`batched statement answered ${outs.length} results for ${batch.length} items`);
            batch.forEach((w, i) => w.resolve(outs[i] as O));
          },
        )
        .catch((e: unknown) => batch.forEach((w) => w.reject(e)))
        .finally(() => {
          inFlight--;
          schedule();
        });
    }
  };

  return (item) =>
    new Promise<O>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      schedule();
    });
}
