/**
 * Remembers DPoP proof ids (`jti`) so that each proof is accepted once. A site with several
 * processes must share one (Redis `SET key 1 NX EXAT expiresAtSec`, a database table with a
 * unique key...): a proof replayed to another process would otherwise pass there.
 */
export interface ReplayCache {
  /**
   * Records `jti` until `expiresAtSec` (unix seconds). Resolves true when it was not seen before,
   * false when it was. Must be atomic: of concurrent calls with one jti, exactly one gets true.
   * A rejection (store down, full) refuses the request with 503 `service_unavailable`.
   */
  consume(jti: string, expiresAtSec: number, nowSec: number): Promise<boolean>;
}

export class ReplayCacheFullError extends Error {
  constructor(max: number) {
    super(`the DPoP replay cache holds ${max} unexpired entries; raise maxEntries or share a bigger store`);
    this.name = 'ReplayCacheFullError';
  }
}

/**
 * The default, for a site running as one process. Bounded: when `maxEntries` unexpired proofs are
 * held, new requests are refused rather than an unexpired entry dropped (dropping one would let
 * that proof be replayed). Each entry lives 250 s, so 100 000 entries allow ~400 requests/s.
 */
export class MemoryReplayCache implements ReplayCache {
  /** jti -> expiry (unix s). Map keeps insertion order, which is expiry order while the clock moves forward. */
  private readonly seen = new Map<string, number>();
  private readonly maxEntries: number;

  constructor(options: { maxEntries?: number } = {}) {
    this.maxEntries = options.maxEntries ?? 100_000;
    if (!Number.isSafeInteger(this.maxEntries) || this.maxEntries < 1) throw new TypeError('maxEntries must be a positive integer');
  }

  get size(): number {
    return this.seen.size;
  }

  async consume(jti: string, expiresAtSec: number, nowSec: number): Promise<boolean> {
    this.purge(nowSec);
    const until = this.seen.get(jti);
    if (until !== undefined) {
      if (until > nowSec) return false;
      this.seen.delete(jti); // re-inserted at the end, in expiry order
    } else if (this.seen.size >= this.maxEntries) {
      throw new ReplayCacheFullError(this.maxEntries);
    }
    this.seen.set(jti, expiresAtSec);
    return true;
  }

  /** Drops expired entries from the oldest end; stops at the first live one. */
  private purge(nowSec: number): void {
    for (const [jti, until] of this.seen) {
      if (until > nowSec) return;
      this.seen.delete(jti);
    }
  }
}
