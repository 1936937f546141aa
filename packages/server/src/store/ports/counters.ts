/** Fixed-window rate counters and named sequences. Times are epoch ms. */

export interface RateCountersRepo {
  /** Atomically adds one to the counter of `key` in the fixed window holding `now`; returns the new count. */
  hit(key: string, windowMs: number, now: number): Promise<{ count: number; resetAt: number }>;
  /** Atomically takes back one `hit` made at `at` (same window), never below zero: an attempt that turned out not to count. */
  release(key: string, windowMs: number, at: number): Promise<void>;
  /** Forgets every window of `key`. */
  clear(key: string): Promise<void>;
  purgeExpired(now: number): Promise<number>;
}

export interface CountersRepo {
  /** Atomically increments and returns the new value (starts at 1). */
  next(name: string): Promise<number>;
  current(name: string): Promise<number>;
}

/**
 * Tells this node that the shared `rev_seq` advanced (decisions §30), after the commit that advanced
 * it, whichever node committed it: on SQLite (one node) in process, on PostgreSQL by `NOTIFY`, which
 * carries the new value only (never the entries) and is delivered at commit, never for a rollback.
 */
export interface RevocationSignal {
  /**
   * Calls `listener` with each new rev_seq; with undefined when changes may have been missed (the
   * PostgreSQL listener reconnected): the listener then reads the counter. Returns the unsubscribe.
   */
  subscribe(listener: (revSeq: number | undefined) => void): () => void;
}
