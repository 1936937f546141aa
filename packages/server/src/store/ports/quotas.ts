/**
 * Ports for the per-owner quotas of decisions §25: the counts they are checked against and the lock
 * that makes a check-then-write exact across nodes. Times are epoch milliseconds.
 */

/** How many of something an owner has, and when the first of them lapses (null: none lapses by itself). */
export interface QuotaCount {
  count: number;
  /** The soonest expiry among the counted rows, for `retry_after`. */
  soonestExpiry: number | null;
}

export interface QuotasRepo {
  /**
   * Serializes the quota-checked writes of one owner until the surrounding transaction ends: call it
   * first in the transaction, before any other write, so that lock order is the same everywhere. On
   * PostgreSQL a transaction-scoped advisory lock (no row is locked; only callers of this method
   * wait for it), so of N concurrent transactions on any number of nodes each counts what the
   * others committed: the quota holds exactly. On SQLite the process has one connection and runs
   * one transaction at a time, so there is nothing to take. Outside a transaction it guards nothing.
   */
  lockOwner(userId: string): Promise<void>;
  /** The owner's open requests of every kind: pending and unexpired at `now`. */
  openRequests(userId: string, now: number): Promise<QuotaCount>;
  /** Distinct sites where the owner holds a live grant (active, unexpired at `now`), with the soonest grant expiry. */
  liveSites(userId: string, now: number): Promise<QuotaCount>;
  /** Whether the owner holds a live grant at `site` (through any of their agents). */
  hasLiveSite(userId: string, site: string, now: number): Promise<boolean>;
  /** The owner's live (not removed) agents. */
  liveAgents(userId: string): Promise<number>;
}
