import type { GrantRecord } from '../../store/ports/index.ts';

/**
 * The `aud` of the passes a grant issues: the resource URL of an app's grant for a protected
 * resource (decisions §28), else its site. One rule for cloud verify, the site step-up and the
 * revocation list, so a pass for one resource is never covered by a grant for another, nor by a
 * site's grant, and a site's pass never by a resource's grant (a URL is never a host).
 */
export const grantAudience = (grant: Pick<GrantRecord, 'site' | 'resource'>): string => grant.resource ?? grant.site;

/** Whether an `aud` (or a `site` a caller names) is a resource URL rather than a site id (a host). */
export const isResourceAudience = (aud: string): boolean => aud.includes('/');
