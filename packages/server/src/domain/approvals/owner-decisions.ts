import type { AuthzRequestRecord, RequestStatus } from '../../store/ports/index.ts';
import { isAgentBlocked } from '../agents/blocked.ts';
import { badRequest, conflict, notFound, unauthorized } from '../errors.ts';
import { looksLikeId, newId } from '../ids.ts';
import { type ApprovedAccess, createGrantFromApproval } from '../grants/grant-from-approval.ts';
import { isKnownUserInfoField, unknownUserInfoField } from '../user-info.ts';
import type { ApprovalDeps } from './deps.ts';
import { expireStaleRequests } from './expiry.ts';
import { checkSiteRoom } from './quota-filing.ts';
import { narrowTo } from './request-rules.ts';
import { approvePlanOfCard, chosenPlanSteps, denyPlanOfCard } from '../plans/plan-decisions.ts';
import { detailSummary } from './agent-approvals.ts';
import { boundDetailsActivity } from '../receipts/bound-details.ts';
import { approvalIsProvable, challengeOf, newApprovalNonce, receiptOf } from '../receipts/approval-receipt.ts';
import type { ReceiptRecord } from '../../store/ports/index.ts';

/** ApproveLimitsIn (decisions §3). */
export const LIMIT_EXPIRES_MIN_SEC = 60;
export const LIMIT_EXPIRES_MAX_SEC = 31_536_000;

export interface TxAck {
  approve: boolean;
  /** WebAuthn assertion JSON over this request's challenge; required to approve. */
  assertion?: unknown;
  scopes?: string[];
  userInfo?: string[];
  limits?: { expiresIn?: number; maxUses?: number };
  /** A plan card: the steps pre-approved (absent = all; money and security steps never). */
  steps?: string[];
}

/** The owner's request, or 404 alike for unknown ids and other owners' requests. */
export async function ownedRequest(d: ApprovalDeps, userId: string, txnId: string): Promise<AuthzRequestRecord> {
  const request = looksLikeId('t', txnId) ? await d.store.authzRequests.byId(txnId) : undefined;
  if (!request || request.userId !== userId) throw notFound('request not found');
  return request;
}

/** 409 unless the request still waits for an answer; a pending one past its expiry is stored as expired. */
async function requirePending(d: ApprovalDeps, request: AuthzRequestRecord, now: number): Promise<void> {
  let status: RequestStatus = request.status;
  if (status === 'pending' && request.expiresAt <= now) {
    await expireStaleRequests(d, now, { agentId: request.agentId, site: request.site });
    status = 'expired';
  }
  if (status !== 'pending') throw conflict(`request is not pending (it is ${status})`);
}

/**
 * GET /api/txn/{txn_id}/assertion-options: a challenge bound to this owner and this request. An
 * access request that the site quota would refuse is refused here already, before the passkey.
 */
export async function approvalOptions(d: ApprovalDeps, userId: string, txnId: string): Promise<unknown> {
  const request = await ownedRequest(d, userId, txnId);
  await requirePending(d, request, d.clock.now());
  if (request.kind === 'initial') await checkSiteRoom(d.store, userId, request.site, d.clock.now());
  // A step-up or agent approval: the passkey signs over what is approved (decisions §29).
  const committed = approvalIsProvable(request) ? committedChallenge({ ...request, action: request.action }) : undefined;
  return (await d.passkeys.assertionOptions(userId, request.id, committed)).options;
}

function committedChallenge(request: AuthzRequestRecord & { action: string }): { challenge: string; nonce: string } {
  const nonce = newApprovalNonce();
  return { challenge: challengeOf(request, nonce), nonce };
}

function checkLimits(limits: TxAck['limits']): { expiresIn: number | null; maxUses: number | null } {
  const expiresIn = limits?.expiresIn ?? null;
  const maxUses = limits?.maxUses ?? null;
  if (expiresIn !== null && (!Number.isInteger(expiresIn) || expiresIn < LIMIT_EXPIRES_MIN_SEC || expiresIn > LIMIT_EXPIRES_MAX_SEC)) {
    throw badRequest(`limits.expires_in must be whole seconds from ${LIMIT_EXPIRES_MIN_SEC} to ${LIMIT_EXPIRES_MAX_SEC}`);
  }
  if (maxUses !== null && (!Number.isInteger(maxUses) || maxUses < 1)) throw badRequest('limits.max_uses must be an integer of at least 1');
  return { expiresIn, maxUses };
}

/** What an approval of an access request grants; 400 on widening or unknown names. */
function approvedAccess(request: AuthzRequestRecord, ack: TxAck): ApprovedAccess {
  const unknown = ack.userInfo?.find((name) => !isKnownUserInfoField(name));
  if (unknown !== undefined) throw unknownUserInfoField(unknown);
  const { expiresIn, maxUses } = checkLimits(ack.limits);
  return {
    grantId: newId('gr'),
    scopes: narrowTo('scopes', request.scopes, ack.scopes),
    userInfo: narrowTo('user_info', request.userInfo, ack.userInfo),
    expiresIn,
    maxUses,
  };
}

/** The Activity names of an answer, per request kind. */
const ACTIONS = {
  initial: { approved: 'request.approved', denied: 'request.denied' },
  stepup: { approved: 'stepup.approved', denied: 'stepup.denied' },
  agent_approval: { approved: 'agent_approval.approved', denied: 'agent_approval.denied' },
  plan: { approved: 'plan.approved', denied: 'plan.denied' },
} as const satisfies Record<AuthzRequestRecord['kind'], { approved: string; denied: string }>;

const LOST_RACE = 'request is not pending any more (another device answered first, or it expired or was cancelled)';

/**
 * POST /api/txn/{txn_id}/response. Denying needs only the session; approving needs a passkey
 * assertion over this request's challenge (401 otherwise). The decision is a compare-and-set on the
 * request's status, so the first answer from any device wins and every other gets 409. Approving an
 * access request creates its grant in the same transaction, within the site quota (409 past it,
 * checked before the passkey and again, exactly, under the owner's quota lock). The owner's other
 * devices are then told to dismiss the card.
 */
export async function decide(d: ApprovalDeps, userId: string, txnId: string, ack: TxAck, ip: string | null = null): Promise<{ status: RequestStatus }> {
  const request = await ownedRequest(d, userId, txnId);
  await requirePending(d, request, d.clock.now());
  const actions = ACTIONS[request.kind];

  if (!ack.approve) {
    // One transaction: a denial is saved with its record and its notices or not at all, so an error
    // is never answered for an answer that was kept (the owner could not take it back: 409 then).
    await d.store.transaction(async (repos) => {
      const now = d.clock.now();
      const denied = await repos.authzRequests.transition(request.id, ['pending'], 'denied', now);
      if (!denied) throw conflict(LOST_RACE);
      if (request.kind === 'plan') await denyPlanOfCard(repos, request, now);
      await d.activity.record({ userId, action: actions.denied, agentId: request.agentId, site: request.site, detail: summary(request), ip }, repos.activity);
      await d.notifier.requestSettled(userId, request.id, repos);
    });
    d.notifier.wake();
    return { status: 'denied' };
  }

  // Step-up approvals approve the one action as asked; scopes, user_info and limits do not apply.
  const access = request.kind === 'initial' ? approvedAccess(request, ack) : null;
  if (ack.assertion === undefined || ack.assertion === null) {
    throw unauthorized('approving needs a passkey assertion over this request (GET /api/txn/{txn_id}/assertion-options)');
  }
  if (access) await checkSiteRoom(d.store, userId, request.site, d.clock.now());
  if (request.kind === 'plan') await chosenPlanSteps(d.store, request, ack.steps);
  const { passkey, issued, assertion } = await d.passkeys.verifyApproval(userId, request.id, ack.assertion);
  let receipt: ((approvedAt: number) => ReceiptRecord) | undefined;
  if (approvalIsProvable(request)) {
    const provable = { ...request, action: request.action };
    // Fail closed: the challenge signed must be the one this request's fields and nonce commit to.
    if (issued.nonce == null || issued.challenge !== challengeOf(provable, issued.nonce)) {
      throw unauthorized('passkey assertion failed; ask for new assertion options and try again');
    }
    const nonce = issued.nonce;
    receipt = (approvedAt) => receiptOf(provable, nonce, assertion, approvedAt);
  }
  return settleApproved(d, userId, request, access, { device_id: passkey.id }, ip, ack.steps, receipt);
}

/** What an approval by a linked identity provider's fresh sign-in carries (decisions §15). */
export interface IdentityProviderProof {
  provider: string;
  limits: TxAck['limits'];
}

/**
 * Checks, before the owner is sent to the identity provider, that this request may be approved that
 * way: the owner's, pending, an access request (`initial`; step-ups need a passkey: decisions §15),
 * within the site quota, with valid limits. The same checks run again at the callback.
 */
export async function checkIdentityProviderApproval(d: ApprovalDeps, userId: string, txnId: string, limits: TxAck['limits']): Promise<void> {
  const request = await ownedRequest(d, userId, txnId);
  await requirePending(d, request, d.clock.now());
  requireIdentityProviderKind(request);
  checkLimits(limits);
  await checkSiteRoom(d.store, userId, request.site, d.clock.now());
}

function requireIdentityProviderKind(request: AuthzRequestRecord): void {
  if (request.kind !== 'initial') {
    throw conflict('this request can only be approved with a passkey: an identity provider approves access requests, never step-ups, plans or take-overs');
  }
}

/**
 * Approves an access request for an owner whom a linked identity provider has just signed in again
 * (identity-providers/callback.ts checked the identity and its `auth_time`). The same settlement as a
 * passkey approval: compare-and-set, grant, activity record and notices alike.
 */
export async function approveByIdentityProvider(d: ApprovalDeps, userId: string, txnId: string, proof: IdentityProviderProof, ip: string | null): Promise<{ status: RequestStatus }> {
  const request = await ownedRequest(d, userId, txnId);
  await requirePending(d, request, d.clock.now());
  requireIdentityProviderKind(request);
  const access = approvedAccess(request, { approve: true, limits: proof.limits });
  await checkSiteRoom(d.store, userId, request.site, d.clock.now());
  return settleApproved(d, userId, request, access, { via: 'identity_provider', provider: proof.provider }, ip);
}

/**
 * The one way a request becomes approved, whatever proved the owner: the request's compare-and-set,
 * the grant of an access request within the site quota, the activity record, then the notices.
 */
async function settleApproved(
  d: ApprovalDeps, userId: string, request: AuthzRequestRecord, access: ApprovedAccess | null, proof: Record<string, unknown>, ip: string | null,
  planSteps?: string[], receipt?: (approvedAt: number) => ReceiptRecord,
): Promise<{ status: RequestStatus }> {
  const action = ACTIONS[request.kind].approved;
  await d.store.transaction(async (repos) => {
    const now = d.clock.now();
    // First in the transaction: the lock order of every quota-checked write (quota-filing.ts).
    if (access) await repos.quotas.lockOwner(userId);
    const approved = await repos.authzRequests.transition(request.id, ['pending'], 'approved', now, access ? { grantId: access.grantId } : {});
    if (!approved) throw conflict(LOST_RACE);
    const agent = await repos.agents.byId(request.agentId);
    if (!agent || isAgentBlocked(agent)) throw conflict('the agent was removed or revoked; nothing to approve');
    const detail: Record<string, unknown> = { ...summary(request), ...proof };
    if (access) {
      await checkSiteRoom(repos, userId, request.site, now);
      await createGrantFromApproval(repos, approved, access, now);
      Object.assign(detail, { scopes: access.scopes, user_info: access.userInfo, grant_id: access.grantId, limits: { expires_in: access.expiresIn, max_uses: access.maxUses } });
    }
    if (request.kind === 'plan') detail['steps'] = await approvePlanOfCard(repos, request, planSteps, now);
    // The receipt with the decision: an approval is never stored without its proof, nor a proof without it.
    if (receipt && !(await repos.receipts.record(receipt(now)))) throw conflict(LOST_RACE);
    // Activity says a receipt was kept (GET /api/v1/receipts/{txn_id}, the export's `receipts`).
    if (receipt) detail['receipt'] = true;
    await d.activity.record({ userId, action, agentId: request.agentId, site: request.site, detail, ip }, repos.activity);
    // The notices in the same transaction: nothing that can fail runs after the approval is committed.
    await d.notifier.requestSettled(userId, request.id, repos);
  });
  d.notifier.wake();
  return { status: 'approved' };
}

function summary(request: AuthzRequestRecord): Record<string, unknown> {
  if (request.kind === 'agent_approval') return { txn_id: request.id, action: request.action, ...detailSummary(request.details ?? {}), ...boundDetailsActivity(request.boundDetails) };
  return request.kind === 'stepup'
    ? { txn_id: request.id, action: request.action, ...boundDetailsActivity(request.boundDetails) }
    : { txn_id: request.id, scopes: request.scopes, user_info: request.userInfo };
}
