import { MemoryReplayCache, type MemoryReplayCacheOptions } from './replay-memory.ts';

/** Who sent a proof and when it says it was signed: lets a cache keep agents apart (see MemoryReplayCache). */
export type ReplayProof = {
  /** The pass's `sub`: Mandate signed it, so an agent cannot pass for another. */
  agentId: string;
  /** The proof's `iat` (unix s), already judged to be within 120 s of now. */
  iat: number;
};

/**
 * `true`: not seen before, now recorded. `false`: seen (a replay). `'before_horizon'`: this agent's
 * proofs signed at or before its horizon are refused, because some of them had to be forgotten (only
 * MemoryReplayCache answers this; the request is refused as `dpop_replay`).
 */
export type ConsumeResult = boolean | 'before_horizon';

/**
 * Remembers DPoP proof ids (`jti`) so that each proof is accepted once. A site with several
 * processes must share one (Redis `SET key 1 NX EXAT expiresAtSec`, a database table with a
 * unique key...): a proof replayed to another process would otherwise pass there.
 */
export interface ReplayCache {
  /**
   * Records `jti` until `expiresAtSec` (unix seconds). Resolves true when it was not seen before,
   * false when it was. Must be atomic: of concurrent calls with one jti, exactly one gets true.
   * A rejection (store down) refuses the request with 503 `service_unavailable`, so a shared store
   * must not reject for being full either: give it room for (requests per second x 250) keys, and
   * never let it drop a key before its expiry (that would let the proof be replayed).
   */
  consume(jti: string, expiresAtSec: number, nowSec: number, proof: ReplayProof): Promise<ConsumeResult>;
}

/** What `replayCache` in the verifier options may be: a cache of your own, or the in-memory one's budget. */
export type ReplayCacheOption = ReplayCache | MemoryReplayCacheOptions;

/**
 * The replay cache a verifier uses, from its `replayCache` option; throws a TypeError for a value
 * that is neither a cache nor valid budget options, so a misconfigured site fails at start-up.
 */
export function replayCacheFrom(option: ReplayCacheOption | undefined): ReplayCache {
  if (option === undefined) return new MemoryReplayCache();
  if (typeof option !== 'object' || option === null) {
    throw new TypeError('replayCache must be a ReplayCache (an object with consume) or { maxEntries, maxEntriesPerAgent }');
  }
  if ('consume' in option) {
    if (typeof option.consume !== 'function') throw new TypeError('replayCache.consume must be a function');
    return option;
  }
  return new MemoryReplayCache(option);
}
