import { conflict, unauthorized } from '../errors.ts';
import { usableGrant } from '../grants/usable.ts';
import { checkUserInfoNames } from '../user-info.ts';
import type { ApprovalDeps } from './deps.ts';
import { expireStaleRequests } from './expiry.ts';
import { countAccessRequest, fileRequest } from './quota-filing.ts';
import { ACCESS_REQUEST_LIMIT, REQUEST_LIFETIME_SEC, newPendingRequest, normalizeScopes, normalizeSite } from './request-rules.ts';

export interface AccessRequestInput {
  agentId: string;
  agentJwt: string;
  site: string;
  scopes: readonly string[];
  userInfo: readonly string[];
  ip?: string | null;
}

export interface CreatedRequest {
  txnId: string;
  expiresIn: number;
}

/**
 * An agent asks its owner for access to a site (POST /api/v1/authz-requests), in named steps:
 * authenticate the agent, check the request, count it (per site, then per hour across sites), refuse
 * duplicates, store within the owner's quotas (quota-filing.ts), notify.
 */
export async function requestAccess(d: ApprovalDeps, input: AccessRequestInput): Promise<CreatedRequest> {
  const agent = await d.agents.verifyJwt(input.agentJwt, input.agentId);
  const site = normalizeSite(input.site);
  const scopes = normalizeScopes(input.scopes);
  const owner = await d.store.users.byId(agent.userId);
  if (!owner) throw unauthorized('invalid agent_jwt: the agent has no owner');
  const userInfo = checkUserInfoNames(input.userInfo, owner);
  await d.limiter.check(`authz-request:${agent.id}:${site}`, ACCESS_REQUEST_LIMIT.limit, ACCESS_REQUEST_LIMIT.windowSec);
  await countAccessRequest(d, agent.id);

  const now = d.clock.now();
  if (await usableGrant(d.store.grants, agent.id, site, now)) {
    throw conflict('access already approved', { next_step: 'get a pass with POST /api/v1/token' });
  }
  // A stale pending request must not hold the unique index; then the index decides races.
  await expireStaleRequests(d, now, { agentId: agent.id, site });
  const request = newPendingRequest(agent, site, now, { kind: 'initial', scopes, userInfo, action: null, grantId: null });
  // The request, its record and its pushes commit together: a request nobody is told of cannot exist.
  await d.store.transaction(async (repos) => {
    if (!(await fileRequest(repos, request, now))) {
      throw conflict('a request for this site is already waiting for the owner', { next_step: 'poll the waiting request, or retry after it expires (300 s)' });
    }
    await d.notifier.approvalRequested(agent.userId, { txnId: request.id, kind: 'access', agentName: agent.name, site, scopes, userInfo, expiresAt: request.expiresAt }, repos);
    await d.activity.record({ userId: agent.userId, action: 'request.created', agentId: agent.id, site, detail: { txn_id: request.id, scopes, user_info: userInfo }, ip: input.ip ?? null }, repos.activity);
  });
  d.notifier.wake();
  return { txnId: request.id, expiresIn: REQUEST_LIFETIME_SEC };
}
