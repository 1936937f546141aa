import type { AuthzRequestRecord, Store } from '../../store/ports/index.ts';
import { Activity } from '../activity/activity.ts';
import { type Clock, iso } from '../../clock.ts';

/** One agent's requests at one site, or (no scope) every request of the service. */
export interface ExpiryScope {
  agentId: string;
  site: string;
}

/**
 * Marks pending requests past their expiry as `expired` and records a `request.expired` activity
 * for each, in one transaction: the store's update answers only the rows it changed, so of any
 * number of concurrent callers (the sweep on one node, a poll on another) each expiry is recorded
 * exactly once, and a failed record leaves the request pending for the next caller. Every place
 * that expires requests goes through here, so an unanswered request never leaves the owner's trail
 * silently. Answers the requests it expired.
 */
export async function expireStaleRequests(d: { store: Store; clock: Clock }, now: number, scope?: ExpiryScope): Promise<AuthzRequestRecord[]> {
  const activity = new Activity(d.store.activity, d.clock);
  return d.store.transaction(async (repos) => {
    const expired = await repos.authzRequests.expireStale(now, scope);
    for (const request of expired) {
      await activity.record({ userId: request.userId, action: 'request.expired', agentId: request.agentId, site: request.site, detail: expiredDetail(request) }, repos.activity);
    }
    return expired;
  });
}

/** What the owner's trail shows of a request nobody answered: which request, what it asked, when it lapsed. */
function expiredDetail(request: AuthzRequestRecord): Record<string, unknown> {
  const asked = request.kind !== 'initial'
    ? { action: request.action }
    : { scopes: request.scopes, user_info: request.userInfo };
  return {
    txn_id: request.id,
    kind: request.kind,
    ...asked,
    ...(request.oidc ? { oidc_client_id: request.oidc.clientId } : {}),
    expired_at: iso(request.expiresAt),
  };
}
