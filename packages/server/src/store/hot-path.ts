import type { AgentsRepo, SingleUseRepo, VerifyLookup, VerifyLookupResult } from './ports/index.ts';

/**
 * The two statements cloud verify runs on every request, outside any transaction: the revocation
 * read (agent joined with its grant) and the DPoP jti consumption. Each dialect may run them on its
 * driver directly (sqlite/hot-path.ts, postgres/hot-path.ts) instead of through Kysely, whose
 * per-query work (connection hand-over, promise hops, result transformation) cost more CPU than
 * the statements themselves (measured: bench/README.md). They must mean exactly what the Kysely
 * repositories mean: the store contract suite runs against both.
 */
export interface HotPath {
  withGrants: AgentsRepo['withGrants'];
  consumeMany: SingleUseRepo['consumeMany'];
  /** Store.verifyLookup for a batch (answers in order), when the dialect does both in one statement. */
  verifyLookups?: (batch: readonly VerifyLookup[]) => Promise<VerifyLookupResult[]>;
  close(): Promise<void>;
}
