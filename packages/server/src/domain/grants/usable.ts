import type { GrantRecord, GrantsRepo } from '../../store/ports/index.ts';

/** Active (not revoked or superseded) and not past its own expiry. */
export function isGrantLive(grant: GrantRecord, now: number): boolean {
  return grant.status === 'active' && (grant.expiresAt === null || grant.expiresAt > now);
}

/** Live and with passes left to issue: what "access already approved" means for a new request. */
export function isGrantUsable(grant: GrantRecord, now: number): boolean {
  return isGrantLive(grant, now) && (grant.usesLeft === null || grant.usesLeft > 0);
}

/**
 * The grant an agent holds at a site right now, if it is live. `activeFor` answers the newest
 * active grant; an approval supersedes older ones, so there is at most one.
 */
export async function liveGrant(grants: GrantsRepo, agentId: string, site: string, now: number): Promise<GrantRecord | undefined> {
  const grant = await grants.activeFor(agentId, site);
  return grant && isGrantLive(grant, now) ? grant : undefined;
}

/** Like liveGrant, and with uses left. */
export async function usableGrant(grants: GrantsRepo, agentId: string, site: string, now: number): Promise<GrantRecord | undefined> {
  const grant = await grants.activeFor(agentId, site);
  return grant && isGrantUsable(grant, now) ? grant : undefined;
}
