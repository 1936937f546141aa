/**
 * The write of one pass issuance (`POST /api/v1/token`), as one unit: the caller's rate counter, the
 * grant's compare-and-set (one use spent, the refresh token replaced) and the `pass.issued` record,
 * committed together. Concurrent issuances share a commit (Store.commitPassIssuance). Times are epoch ms.
 */
import type { GrantRecord } from './grants.ts';

export interface PassIssuance {
  /** The grant the caller's agent holds at the site (read before; the compare-and-set checks it again). */
  grantId: string;
  now: number;
  /** SHA-256 of the new refresh token, which replaces every earlier one. */
  newRefreshHash: string;
  /** SHA-256 of the refresh token sent; absent for a call without one (the caller has checked it may). */
  expectedRefreshHash?: string | undefined;
  /**
   * Counted in every case; when this call is over `limit` in its fixed window nothing else is
   * written (as RateCountersRepo.hit: the window starts at `now - now % windowMs`).
   */
  rate: { key: string; windowMs: number; limit: number };
  /**
   * The `pass.issued` record written with the grant's update (its owner, agent and site are the
   * grant's). Its detail is `detail` with `uses_left` added: the grant's uses left after this pass
   * (null: unlimited), which only the update knows.
   */
  record: { detail: Record<string, unknown>; ip: string | null; createdAt: number };
}

export type PassIssuanceOutcome =
  /** Over the rate limit: counted, nothing else written. */
  | { kind: 'limited'; resetAt: number }
  /** The grant was not updated (not active, expired, used up, or another refresh token is current). */
  | { kind: 'refused' }
  /** Committed: the grant as updated, and `rev_seq` as read in the same commit. */
  | { kind: 'issued'; grant: GrantRecord; revSeq: number };

/**
 * Runs a batch of issuances (answers in order) in ONE transaction, answered only once it is
 * durable; if it fails, it fails for every item (none is reported issued). The batch never holds
 * two items for the same grant or the same rate key (the caller splits them into successive
 * batches), so each item is decided as if it ran alone.
 */
export type PassIssuanceBatch = (batch: readonly PassIssuance[]) => Promise<PassIssuanceOutcome[]>;
