import { conflict, forbidden } from '../errors.ts';
import { boundDetailsOf, boundDetailsActivity } from '../receipts/bound-details.ts';
import { liveGrant } from '../grants/usable.ts';
import type { CreatedRequest } from './access-requests.ts';
import type { ApprovalDeps } from './deps.ts';
import { fileRequest } from './quota-filing.ts';
import { REQUEST_LIFETIME_SEC, STEPUP_REQUEST_LIMIT, checkAction, newPendingRequest, normalizeSite } from './request-rules.ts';

export interface StepupRequestInput {
  agentId: string;
  agentJwt: string;
  site: string;
  action: string;
  /** `{summary, digest}` the approval is bound to (decisions §29), as the agent sent it; checked here. */
  details?: unknown;
  ip?: string | null;
}

export const NO_ACCESS = 'no approved access to this site';

/**
 * An agent asks its owner to approve one sensitive action at a site where it holds a live grant
 * (POST /api/v1/stepup). A grant whose uses are exhausted still counts: its last pass may be live,
 * and that pass is exactly what the step-up accompanies.
 */
export async function requestStepup(d: ApprovalDeps, input: StepupRequestInput): Promise<CreatedRequest> {
  const agent = await d.agents.verifyJwt(input.agentJwt, input.agentId);
  const site = normalizeSite(input.site);
  const action = checkAction(input.action);
  const boundDetails = boundDetailsOf(input.details);
  await d.limiter.check(`stepup-request:${agent.id}`, STEPUP_REQUEST_LIMIT.limit, STEPUP_REQUEST_LIMIT.windowSec);

  const now = d.clock.now();
  const grant = await liveGrant(d.store.grants, agent.id, site, now);
  if (!grant) throw forbidden(NO_ACCESS, { next_step: 'ask for access first with POST /api/v1/authz-requests' });
  const request = { ...newPendingRequest(agent, site, now, { kind: 'stepup', scopes: [], userInfo: [], action, grantId: grant.id }), ...(boundDetails && { boundDetails }) };
  await d.store.transaction(async (repos) => {
    // Step-ups are not limited to one at a time; a false here would be a store-level surprise.
    if (!(await fileRequest(repos, request, now))) throw conflict('the step-up request could not be stored; retry');
    await d.notifier.approvalRequested(agent.userId, { txnId: request.id, kind: 'stepup', agentName: agent.name, site, action, expiresAt: request.expiresAt, ...(boundDetails && { details: boundDetails }) }, repos);
    await d.activity.record({ userId: agent.userId, action: 'stepup.requested', agentId: agent.id, site, detail: { txn_id: request.id, action, ...boundDetailsActivity(boundDetails) }, ip: input.ip ?? null }, repos.activity);
  });
  d.notifier.wake();
  return { txnId: request.id, expiresIn: REQUEST_LIFETIME_SEC };
}
