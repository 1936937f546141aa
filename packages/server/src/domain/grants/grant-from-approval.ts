import type { AuthzRequestRecord, GrantRecord, Repos } from '../../store/ports/index.ts';
import { RevocationSequence } from '../revocation/rev-seq.ts';

/** What the owner approved: possibly narrower than asked, with optional limits. */
export interface ApprovedAccess {
  grantId: string;
  scopes: string[];
  userInfo: string[];
  /** Seconds from the approval; null = until revoked. */
  expiresIn: number | null;
  /** Passes the grant may issue; null = unlimited. */
  maxUses: number | null;
}

/**
 * Creates the grant of an approved access request, inside the caller's transaction. Older active
 * or revoked grants of the same agent at the same site are superseded first, so there is one
 * current grant. A superseded revoked grant stays on the revocation list until 720 s after its
 * revocation (revocation-window.ts: the old passes, possibly wider, must stay refused by local
 * verifiers as they are by cloud verify); `rev_seq` advances, so the new grant's passes carry a higher rev_seq than the entry and
 * pass its `<=` rule (decisions §6).
 */
export async function createGrantFromApproval(repos: Repos, request: AuthzRequestRecord, access: ApprovedAccess, now: number): Promise<GrantRecord> {
  const previous = await repos.grants.listForAgent(request.agentId);
  const unlistsRevoked = previous.some((g) => g.site === request.site && g.status === 'revoked');
  if (unlistsRevoked) await new RevocationSequence(repos.counters).advance();
  await repos.grants.supersede(request.agentId, request.site, now);
  const grant: GrantRecord = {
    id: access.grantId,
    userId: request.userId,
    agentId: request.agentId,
    site: request.site,
    scopes: access.scopes,
    userInfo: access.userInfo,
    status: 'active',
    createdAt: now,
    expiresAt: access.expiresIn === null ? null : now + access.expiresIn * 1000,
    usesLeft: access.maxUses,
    refreshHash: null,
    passesIssued: 0,
    revokedAt: null,
    revSeq: null,
    supersededAt: null,
    resource: null,
  };
  await repos.grants.create(grant);
  return grant;
}
