import type { PassIssuance, PassIssuanceBatch, PassIssuanceOutcome } from './ports/index.ts';
import { batchedInSteps } from './stepped-batching.ts';

/**
 * Group commit of pass issuances (Store.commitPassIssuance), as cloud verify's jtis are
 * (single-use-batching.ts) and through stepped-batching.ts: the owner's activity counter row is
 * locked once per commit, not once per pass. Items for the same grant or the same rate key (racing
 * calls with one refresh token) go into successive steps.
 */
export const batchingPassIssuance = (run: PassIssuanceBatch): ((q: PassIssuance) => Promise<PassIssuanceOutcome>) =>
  batchedInSteps(run, passIssuanceKeys, 'pass issuance');

export const passIssuanceKeys = (q: PassIssuance): string[] => [`g\u0000${q.grantId}`, `r\u0000${q.rate.key}`];
