import type { GrantRecord, GrantsRepo } from '../../store/ports/index.ts';
import { isGrantLive, liveGrant } from './usable.ts';

/**
 * The `aud` of the passes a grant issues: the resource URL of an app's grant for a protected
 * resource (decisions §28), else its site. One rule for cloud verify, the site step-up and the
 * revocation list, so a pass for one resource is never covered by a grant for another, nor by a
 * site's grant, and a site's pass never by a resource's grant (a URL is never a host).
 */
export const grantAudience = (grant: Pick<GrantRecord, 'site' | 'resource'>): string => grant.resource ?? grant.site;

/** Whether an `aud` (or a `site` a caller names) is a resource URL rather than a site id (a host). */
export const isResourceAudience = (aud: string): boolean => aud.includes('/');

/**
 * The live grant an agent holds for an audience: a site's (by site) or, for a resource URL, an app's
 * grant for exactly that resource (GrantsRepo.activeForResource).
 */
export async function liveGrantFor(grants: GrantsRepo, agentId: string, aud: string, now: number): Promise<GrantRecord | undefined> {
  if (!isResourceAudience(aud)) return liveGrant(grants, agentId, aud, now);
  const grant = await activeGrantFor(grants, agentId, aud);
  return grant && isGrantLive(grant, now) ? grant : undefined;
}

/** The newest active grant of an agent for an audience (it may have expired or run out of uses). */
export function activeGrantFor(grants: GrantsRepo, agentId: string, aud: string): Promise<GrantRecord | undefined> {
  return isResourceAudience(aud) ? grants.activeForResource(agentId, aud) : grants.activeFor(agentId, aud);
}

/** A `site` as a caller names it: host names are case-insensitive (grants keep them lower-cased); a resource URL is compared exactly. */
export const audienceOfSite = (site: string): string => (isResourceAudience(site) ? site : site.toLowerCase());
