import type { AuthzRequestRecord, Repos, Store } from '../../store/ports/index.ts';
import type { Clock } from '../../clock.ts';
import { conflict } from '../errors.ts';
import { QUOTAS, countHourly, quotaExceeded } from '../quotas.ts';

/**
 * The quotas of decisions §25 that guard the owner's attention: how requests are filed, and the
 * site quota an approval must respect. Every kind of request (an agent's access request, a step-up,
 * an OIDC sign-in, a CIBA request) is stored through `fileRequest`, so none escapes the count.
 */

/** When a site quota refusal has no grant expiry to point at: ask again in an hour. */
const SITE_RETRY_MAX_SEC = 3600;

/**
 * Counts an access request the agent itself files (POST /api/v1/authz-requests, /oidc/authorize)
 * against its hourly budget across all sites, before anything is written: a flooding agent is
 * refused at the cost of one counter update. CIBA requests are filed by the site, not the agent,
 * and are not counted here, so a site cannot spend the agent's budget: they have hourly budgets of
 * their own per agent and client and per owner (domain/oidc/ciba-quota.ts), and count as open requests.
 */
export async function countAccessRequest(d: { store: Store; clock: Clock }, agentId: string): Promise<void> {
  const limit = QUOTAS.accessRequestsPerAgentPerHour;
  await countHourly(d.store.rateCounters, d.clock, `authz-requests-hour:${agentId}`, limit, (retryAfter) =>
    quotaExceeded('access_requests_per_hour', `an agent may file at most ${limit} access requests per hour, across all sites`, retryAfter, {
      next_step: 'wait for the requests already filed to be answered, or retry after retry_after seconds',
    }),
  );
}

/**
 * Stores `request` inside the caller's transaction, within the owner's quotas; answers what
 * `authzRequests.create` answers (false: an access request of this agent for this site is already
 * waiting). In order: the owner's quota lock (first, so every quota-checked transaction takes its
 * locks in the same order), the insert, then the counts, which include the new row: past a quota
 * the error rolls the transaction back, the insert with it. Under the lock the counts see every
 * request other nodes committed before, so racing creations cannot pass a quota (PostgreSQL: an
 * advisory lock per owner; SQLite: one transaction at a time).
 */
export async function fileRequest(repos: Repos, request: AuthzRequestRecord, now: number): Promise<boolean> {
  await repos.quotas.lockOwner(request.userId);
  if (!(await repos.authzRequests.create(request))) return false;
  const open = await repos.quotas.openRequests(request.userId, now);
  if (open.count > QUOTAS.openRequestsPerOwner) {
    const retryAfter = open.soonestExpiry === null ? 1 : (open.soonestExpiry - now) / 1000;
    throw quotaExceeded('open_requests', `the owner already has ${QUOTAS.openRequestsPerOwner} open requests, the most at one time; a new one can be filed when the owner answers one or one expires`, retryAfter, {
      next_step: 'retry after retry_after seconds (when the oldest open request expires)',
    });
  }
  // A step-up is always at a site with a live grant; only an access request can bring a new site.
  if (request.kind === 'initial') {
    const full = await siteQuotaFull(repos, request.userId, request.site, now);
    if (full) {
      throw quotaExceeded('live_sites', `the owner has live access at ${QUOTAS.liveSitesPerOwner} sites, the most allowed; a new site needs the owner to revoke access at a site no longer used`, full.retryAfterSec, {
        next_step: 'ask the owner to revoke access at a site no longer used, then ask again',
      });
    }
  }
  return true;
}

/**
 * Whether approving access at `site` would give the owner live access at more than the quota's
 * sites: undefined when there is room (the site already has a live grant of the owner, or fewer
 * sites do), else when a grant expires and makes room (at most an hour ahead).
 */
async function siteQuotaFull(repos: Pick<Repos, 'quotas'>, userId: string, site: string, now: number): Promise<{ retryAfterSec: number } | undefined> {
  if (await repos.quotas.hasLiveSite(userId, site, now)) return undefined;
  const sites = await repos.quotas.liveSites(userId, now);
  if (sites.count < QUOTAS.liveSitesPerOwner) return undefined;
  const untilExpiry = sites.soonestExpiry === null ? SITE_RETRY_MAX_SEC : (sites.soonestExpiry - now) / 1000;
  return { retryAfterSec: Math.min(untilExpiry, SITE_RETRY_MAX_SEC) };
}

/**
 * The owner's approval of access at `site`: 409 when it would be the owner's site past the quota.
 * Run it before the passkey is asked for (so the owner is told before the gesture) and again inside
 * the approving transaction, after `lockOwner`, where it is exact.
 */
export async function checkSiteRoom(repos: Pick<Repos, 'quotas'>, userId: string, site: string, now: number): Promise<void> {
  if (await siteQuotaFull(repos, userId, site, now)) {
    throw conflict(`you have live access at ${QUOTAS.liveSitesPerOwner} sites, the most an account may have: revoke access at a site you no longer use, then approve this one`, {
      quota: 'live_sites',
    });
  }
}
