import type { AgentRecord, AuthzRequestRecord } from '../../store/ports/index.ts';
import { AppError, notFound } from '../errors.ts';
import { looksLikeId } from '../ids.ts';
import { liveGrantFor } from '../grants/audience.ts';
import type { ApprovalDeps } from './deps.ts';
import { expireStaleRequests } from './expiry.ts';
import { STEPUP_COLLECT_WINDOW_MS } from './request-rules.ts';
import { mintStepupToken } from './stepup-token.ts';

export interface PollView {
  /** The request as the caller should see it (a pending request past its expiry reads `expired`). */
  request: AuthzRequestRecord;
  agentName: string;
  stepupToken?: string;
  stepupTokenError?: string;
}

export const ALREADY_DELIVERED = 'step-up token already delivered';
const FILED_BY_SITE = 'the site filed this step-up: the site collects its token (GET /api/v1/stepup/site/{txn_id})';
const SEND_HEADER = 'send the header X-Agent-JWT (a fresh agent JWT of the agent that asked) to collect the step-up token';

/**
 * GET /api/v1/authz-requests/{txn_id}. Reading is open to whoever holds the (unguessable) txn id;
 * collecting an approved step-up token needs the requesting agent's own JWT in `X-Agent-JWT`.
 * Delivery is a compare-and-set approved -> consumed: of any number of concurrent polls exactly one
 * gets the token (that answer still reads `approved`, so clients waiting for `approved` see it);
 * every later poll reads `consumed`. A poll that fails to collect leaves the request approved.
 */
export async function pollRequest(d: ApprovalDeps, txnId: string, agentJwt: string | undefined, ip: string | null = null): Promise<PollView> {
  const request = looksLikeId('t', txnId) ? await d.store.authzRequests.byId(txnId) : undefined;
  if (!request) throw notFound('request not found');
  return requestView(d, request, (approved, agentName, now) => deliverStepup(d, approved, agentName, agentJwt, now, ip));
}

/** Hands an approved step-up, still within its collection window, to whoever may collect it. */
export type StepupCollector = (request: AuthzRequestRecord, agentName: string, now: number) => Promise<PollView>;

/**
 * A request as a poll sees it (the agent's, and the site's for a step-up it filed): a pending
 * request past its expiry is marked and reads `expired`; an approved step-up not collected within
 * STEPUP_COLLECT_WINDOW_MS reads `expired`; one still collectable goes to `collect`.
 */
export async function requestView(d: ApprovalDeps, request: AuthzRequestRecord, collect: StepupCollector): Promise<PollView> {
  const agentName = (await d.store.agents.byId(request.agentId))?.name ?? '';
  const now = d.clock.now();

  if (request.status === 'pending' && request.expiresAt <= now) {
    await expireStaleRequests(d, now, { agentId: request.agentId, site: request.site });
    return { request: { ...request, status: 'expired' }, agentName };
  }
  if (request.kind !== 'stepup') return { request: await asGranted(d, request), agentName };
  if (request.status === 'consumed') return { request, agentName, stepupTokenError: ALREADY_DELIVERED };
  if (request.status !== 'approved') return { request, agentName };

  if ((request.decidedAt ?? request.createdAt) + STEPUP_COLLECT_WINDOW_MS <= now) {
    const expired = (await d.store.authzRequests.transition(request.id, ['approved'], 'expired', now)) ?? (await d.store.authzRequests.byId(request.id)) ?? request;
    return { request: expired, agentName };
  }
  return collect(request, agentName, now);
}

/**
 * An approved access request reads what the owner granted (they may have narrowed the scopes and
 * user-info fields), so the agent learns what its passes will carry before asking for one.
 */
async function asGranted(d: ApprovalDeps, request: AuthzRequestRecord): Promise<AuthzRequestRecord> {
  if (request.status !== 'approved' || request.grantId === null) return request;
  const grant = await d.store.grants.byId(request.grantId);
  return grant ? { ...request, scopes: grant.scopes, userInfo: grant.userInfo } : request;
}

async function deliverStepup(d: ApprovalDeps, request: AuthzRequestRecord, agentName: string, agentJwt: string | undefined, now: number, ip: string | null): Promise<PollView> {
  // The site that filed a step-up is the one waiting for its token (GET /api/v1/stepup/site/{txn_id}).
  if (request.filedBy === 'site') return { request, agentName, stepupTokenError: FILED_BY_SITE };
  if (agentJwt === undefined || agentJwt === '') return { request, agentName, stepupTokenError: SEND_HEADER };
  let agent: AgentRecord;
  try {
    agent = await d.agents.verifyJwt(agentJwt, request.agentId);
  } catch (e) {
    if (e instanceof AppError && e.status < 500) return { request, agentName, stepupTokenError: `X-Agent-JWT refused (it must be a valid agent JWT of the agent that asked): ${e.detail}` };
    throw e;
  }
  return collectStepup(d, request, agentName, agent, now, ip);
}

/**
 * Mints the step-up token of an approved request and delivers it at most once: a compare-and-set
 * approved -> consumed decides, so of any number of concurrent collectors (on any node) exactly one
 * gets the token; the others read `consumed`. `agent` is the requesting agent, already authenticated.
 * `binding`: for an app's site step-up (decisions §28), what its token is bound to (mintStepupToken).
 */
export async function collectStepup(d: ApprovalDeps, request: AuthzRequestRecord, agentName: string, agent: AgentRecord, now: number, ip: string | null, binding?: string): Promise<PollView> {
  // No step-up for access that was revoked in the meantime (decisions §6). A request filed with an
  // app's resource pass names the resource: its grant is the one for exactly that resource.
  if (!(await liveGrantFor(d.store.grants, agent.id, request.site, now))) {
    return { request, agentName, stepupTokenError: 'no approved access to this site any more; the step-up cannot be delivered' };
  }
  // Minted before the compare-and-set: a token minted for a lost race is simply never shown.
  const { token, claims } = await mintStepupToken(d.keys, d.issuer, request, agent, now, binding);
  const won = await d.store.authzRequests.transition(request.id, ['approved'], 'consumed', now);
  if (!won) {
    const current = (await d.store.authzRequests.byId(request.id)) ?? request;
    return { request: current, agentName, ...(current.status === 'consumed' ? { stepupTokenError: ALREADY_DELIVERED } : {}) };
  }
  await d.activity.record({ userId: request.userId, action: 'stepup.delivered', agentId: agent.id, site: request.site, detail: { txn_id: request.id, action: request.action, jti: claims.jti, exp: claims.exp, ...(request.filedBy === 'site' ? { filed_by: 'site' } : {}) }, ip });
  return { request: { ...won, status: 'approved' }, agentName, stepupToken: token };
}
