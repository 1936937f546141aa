/** Named leases, so background work runs on one node at a time. Times are epoch ms. */

export interface LeaseRecord {
  name: string;
  holder: string;
  expiresAt: number;
}

/**
 * Named leases in the shared store, so that background work runs on one node at a time. A lease is
 * an efficiency guard, not a safety one: the work it guards must stay harmless if two nodes ever
 * ran it at once (a node whose clock runs far ahead could take a lease early).
 */
export interface LeasesRepo {
  /**
   * Takes the lease `name` for `holder` until `now + ttlMs`, or renews it when `holder` already
   * holds it. One conditional upsert: it succeeds when the lease is free, expired at `now`, or held
   * by `holder`. Of N concurrent callers with different holders on any number of nodes, at most one
   * gets true.
   */
  acquire(name: string, holder: string, now: number, ttlMs: number): Promise<boolean>;
  /** Gives the lease up if `holder` holds it (a node shutting down), so another node can take it at once. */
  release(name: string, holder: string): Promise<boolean>;
  get(name: string): Promise<LeaseRecord | undefined>;
}
