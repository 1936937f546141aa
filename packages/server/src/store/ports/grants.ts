/** Grants: an owner's approval of one agent at one site. Times are epoch ms. */

export type GrantStatus = 'active' | 'revoked' | 'superseded';

export interface GrantRecord {
  id: string;
  userId: string;
  agentId: string;
  site: string;
  scopes: string[];
  userInfo: string[];
  status: GrantStatus;
  createdAt: number;
  expiresAt: number | null;
  usesLeft: number | null;
  /** SHA-256 of the one current refresh token. */
  refreshHash: string | null;
  passesIssued: number;
  revokedAt: number | null;
  revSeq: number | null;
  /** When a newer approval superseded it; null while it is active or revoked. */
  supersededAt: number | null;
  /**
   * The resource URL (RFC 8707) an app's grant is for, exactly as approved (decisions §28); `site`
   * is its host. Null for agents' grants and sign-ins.
   */
  resource: string | null;
}

/** A revoked grant as the revocation list reads it (GrantsRepo.listRevoked). */
export type RevokedGrantRow = Pick<GrantRecord, 'id' | 'agentId' | 'site' | 'resource' | 'revSeq'> & { revokedAt: number };

/** One page of GrantsRepo.listRevoked: at most `limit` rows after the key `after` (revokedAt, id). */
export interface RevokedGrantPage {
  after?: { revokedAt: number; id: string };
  limit: number;
}

export interface GrantsRepo {
  create(grant: GrantRecord): Promise<void>;
  byId(id: string): Promise<GrantRecord | undefined>;
  /**
   * The newest active grant of an agent at a site, not for a resource (it may have expired or run
   * out of uses). An app's grants for resources (decisions §28) are found by activeForResource.
   */
  activeFor(agentId: string, site: string): Promise<GrantRecord | undefined>;
  /** The newest active grant of an agent for a resource URL (compared exactly). */
  activeForResource(agentId: string, resource: string): Promise<GrantRecord | undefined>;
  /** Active or revoked grants of an agent for a resource -> superseded at `now` (a fresh approval replaces them). */
  supersedeResource(agentId: string, resource: string, now: number): Promise<number>;
  listActiveForUser(userId: string): Promise<GrantRecord[]>;
  listForAgent(agentId: string): Promise<GrantRecord[]>;
  /** Active -> revoked at `revSeq`; false when it was not active. */
  revoke(id: string, now: number, revSeq: number): Promise<boolean>;
  revokeAllForAgent(agentId: string, now: number, revSeq: number): Promise<number>;
  /**
   * Active or revoked grants of an agent at a site, not for a resource (`resource` null), ->
   * superseded at `now` (a fresh approval replaces them). An app's grants for resources on that
   * host are left alone (supersedeResource replaces those).
   */
  supersede(agentId: string, site: string, now: number): Promise<number>;
  /**
   * Issues one pass in one atomic statement: the grant must be active, unexpired at `now`, with uses
   * left (one is used), and, when `expectedRefreshHash` is given, hold exactly that refresh token.
   * The refresh token is replaced by `newRefreshHash`. Of concurrent callers presenting the same
   * refresh token exactly one succeeds. Returns the updated grant, or undefined.
   */
  issuePass(id: string, args: { now: number; newRefreshHash: string; expectedRefreshHash?: string }): Promise<GrantRecord | undefined>;
  /**
   * Replaces the grant's user-info fields, only if they are still `expected` (compare-and-set, so
   * two narrowings at once cannot bring back a field the other removed). Returns false otherwise.
   */
  setUserInfo(id: string, userInfo: string[], expected: string[]): Promise<boolean>;
  /**
   * The grant part of the revocation list at `now` (decisions §25): grants revoked less than
   * LISTED_FOR_MS (600 s + 120 s, domain/revocation/revocation-window.ts) before `now`, also those
   * superseded since, ordered by (revokedAt, id). With `page`, at most `page.limit` of them, after
   * the key `page.after` (keyset paging: a long list is read in steps).
   */
  listRevoked(now: number, page?: RevokedGrantPage): Promise<RevokedGrantRow[]>;
}
