import type { AgentApprovalDetails, AuthzRequestRecord } from '../../store/ports/index.ts';
import { conflict } from '../errors.ts';
import { categoryOf } from '../modes/category.ts';
import { type AgentApprovalDetailsIn, checkApprovalAction, normalizeDetails } from '../modes/approval-details.ts';
import type { ApprovalDeps } from './deps.ts';
import { modeDecision } from '../modes/auto-approval.ts';
import { noPlanMatch } from '../modes/plan-match.ts';
import { fileRequest } from './quota-filing.ts';
import { boundDetailsActivity, boundDetailsWithin } from '../receipts/bound-details.ts';
import { REQUEST_LIFETIME_SEC, newPendingRequest, normalizeSite } from './request-rules.ts';

export interface AgentApprovalInput {
  agentId: string;
  agentJwt: string;
  site: string;
  action: string;
  /** What the agent read on the page, and optionally `summary` and `digest`: the details the approval is bound to. */
  details?: (AgentApprovalDetailsIn & { summary?: unknown; digest?: unknown }) | undefined;
  ip?: string | null;
}

export interface CreatedAgentApproval {
  txnId: string;
  expiresIn: number;
  status: 'pending' | 'approved';
}

/** 30 agent approvals per agent per minute, counted apart from step-ups (decisions §19). */
export const AGENT_APPROVAL_LIMIT = { limit: 30, windowSec: 60 } as const;

/**
 * An agent asks its owner to approve one action on a site that need not use the service
 * (POST /api/v1/agent-approval): no site grant is needed, and several may wait for one site at
 * once. A matching pre-approved plan step or the agent's approval mode may approve it at once
 * (filed as approved, with an Activity record of the reason and an `auto_approved` inbox notice);
 * otherwise it is filed pending within the owner's open-requests quota (§25) and the owner gets a
 * card (push + inbox). The agent polls it like any request.
 */
export async function requestAgentApproval(d: ApprovalDeps, input: AgentApprovalInput): Promise<CreatedAgentApproval> {
  const agent = await d.agents.verifyJwt(input.agentJwt, input.agentId);
  const site = normalizeSite(input.site);
  const action = checkApprovalAction(input.action);
  const details = normalizeDetails(input.details);
  const boundDetails = boundDetailsWithin(input.details);
  await d.limiter.check(`agent-approval:${agent.id}`, AGENT_APPROVAL_LIMIT.limit, AGENT_APPROVAL_LIMIT.windowSec);

  const now = d.clock.now();
  const pending: AuthzRequestRecord = { ...newPendingRequest(agent, site, now, { kind: 'agent_approval', scopes: [], userInfo: [], action, grantId: null }), details, ...(boundDetails && { boundDetails }) };
  const category = categoryOf({ action, ...details });

  // A pre-approved plan step first (the plans seam), then the approval mode; else the owner decides.
  const plan = await (d.planMatch ?? noPlanMatch)(agent.id, site, { ...details, action, txnId: pending.id }, now);
  const auto = plan ? { reason: plan.reason, detail: { via: 'plan', ...plan.detail } } : await autoByMode(d, agent.id, site, category, details);
  if (auto) {
    const request: AuthzRequestRecord = { ...pending, status: 'approved', decidedAt: now };
    await d.store.transaction(async (repos) => {
      if (!(await fileRequest(repos, request, now))) throw conflict('the approval request could not be stored; retry');
      await d.notifier.autoApproved(agent.userId, { txnId: request.id, agentName: agent.name, site, what: details.label ?? action, reason: auto.reason }, repos);
      await d.activity.record({ userId: agent.userId, action: 'agent_approval.auto_approved', agentId: agent.id, site, detail: { txn_id: request.id, action, category, reason: auto.reason, ...auto.detail, ...detailSummary(details), ...boundDetailsActivity(boundDetails) }, ip: input.ip ?? null }, repos.activity);
    });
    d.notifier.wake();
    return { txnId: request.id, expiresIn: REQUEST_LIFETIME_SEC, status: 'approved' };
  }

  const request = pending;
  await d.store.transaction(async (repos) => {
    if (!(await fileRequest(repos, request, now))) throw conflict('the approval request could not be stored; retry');
    await d.notifier.approvalRequested(agent.userId, { txnId: request.id, kind: 'agent_approval', agentName: agent.name, site, action: details.label ?? action, expiresAt: request.expiresAt, details: boundDetails }, repos);
    await d.activity.record({ userId: agent.userId, action: 'agent_approval.requested', agentId: agent.id, site, detail: { txn_id: request.id, action, category, ...detailSummary(details), ...boundDetailsActivity(boundDetails) }, ip: input.ip ?? null }, repos.activity);
  });
  d.notifier.wake();
  return { txnId: request.id, expiresIn: REQUEST_LIFETIME_SEC, status: 'pending' };
}

async function autoByMode(d: ApprovalDeps, agentId: string, site: string, category: ReturnType<typeof categoryOf>, details: AgentApprovalDetails): Promise<{ reason: string; detail: Record<string, unknown> } | null> {
  const mode = await modeDecision(d, agentId, site, category, details);
  return mode ? { reason: mode.reason, detail: { via: 'mode', mode_site: mode.modeSite } } : null;
}

/** What Activity keeps of the details: what the owner would want to read back later. */
export function detailSummary(details: AgentApprovalDetails): Record<string, unknown> {
  const { label, amount, item, page, host, target_host } = details;
  return Object.fromEntries(Object.entries({ label, amount, item, page, host, target_host }).filter(([, v]) => v !== undefined));
}
