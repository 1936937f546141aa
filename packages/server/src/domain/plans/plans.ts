import type { PlanRecord, PlanStepRecord, PlanStepState } from '../../store/ports/index.ts';
import { isAgentBlocked } from '../agents/blocked.ts';
import type { ApprovalDeps } from '../approvals/deps.ts';
import { fileRequest } from '../approvals/quota-filing.ts';
import { REQUEST_LIFETIME_SEC, newPendingRequest } from '../approvals/request-rules.ts';
import { conflict, notFound } from '../errors.ts';
import { looksLikeId, newId } from '../ids.ts';
import { type PlanIn, checkPlanIn, preApprovable } from './plan-input.ts';
import type { Category } from './plan-categories.ts';

/** Plans an agent may submit: a scheduled task files a few a day, not a stream. */
export const PLAN_SUBMIT_LIMIT = { limit: 20, windowSec: 3600 } as const;
/** GET /api/plans lists plans ending in the last 7 days or later, at most 50. */
export const PLAN_LIST_DAYS = 7;
export const PLAN_LIST_MAX = 50;

export type PlanDeps = Pick<ApprovalDeps, 'store' | 'clock' | 'limiter' | 'agents' | 'activity' | 'notifier'>;

export interface PlanStepOut {
  id: string;
  button: string;
  state: PlanStepState;
  approved: boolean;
  uses_left: number;
  /** False for money and security steps: they always ask, whatever the owner ticks. */
  pre_approvable: boolean;
  url: string;
  reason?: string;
}

export interface PlanOut {
  plan_id: string;
  title: string;
  status: PlanRecord['status'];
  start_at: number;
  end_at: number;
  steps: PlanStepOut[];
}

const stepOut = (s: PlanStepRecord): PlanStepOut => ({
  id: s.id, button: s.button, state: s.state, approved: s.approved, uses_left: s.approved ? s.usesLeft : 0, pre_approvable: preApprovable(s.category as Category), url: s.url, ...(s.reason !== null ? { reason: s.reason } : {}),
});

export const planOut = (p: PlanRecord): PlanOut => ({
  plan_id: p.id, title: p.title, status: p.status, start_at: Math.floor(p.startAt / 1000), end_at: Math.floor(p.endAt / 1000), steps: p.steps.map(stepOut),
});

/**
 * POST /api/v1/plans: the plan is checked in full, stored `pending` with every step `waiting`, and
 * one card (a request of kind `plan`) goes to the owner, counted with the owner's open requests.
 */
export async function submitPlan(d: PlanDeps, input: { agentId: string; agentJwt: string; plan: PlanIn; ip?: string | null }): Promise<{ planId: string; txnId: string; status: 'pending'; expiresIn: number }> {
  const agent = await d.agents.verifyJwt(input.agentJwt, input.agentId);
  const now = d.clock.now();
  const draft = checkPlanIn(input.plan, Math.floor(now / 1000));
  await d.limiter.check(`plan-submit:${agent.id}`, PLAN_SUBMIT_LIMIT.limit, PLAN_SUBMIT_LIMIT.windowSec);
  const site = draft.steps[0]!.host;
  const request = newPendingRequest(agent, site, now, { kind: 'plan', scopes: [], userInfo: [], action: draft.title, grantId: null });
  const plan: PlanRecord = {
    id: newId('p'), userId: agent.userId, agentId: agent.id, txnId: request.id, title: draft.title, startAt: draft.startAt, endAt: draft.endAt,
    status: 'pending', createdAt: now, decidedAt: null,
    steps: draft.steps.map((s) => ({ ...s, usesLeft: s.uses, approved: false, state: 'waiting', reason: null })),
  };
  await d.store.transaction(async (repos) => {
    if (!(await fileRequest(repos, request, now))) throw conflict('the plan could not be stored; retry');
    await repos.plans.create(plan);
    await d.notifier.approvalRequested(agent.userId, { txnId: request.id, kind: 'plan', agentName: agent.name, site, action: draft.title, expiresAt: request.expiresAt }, repos);
    await d.activity.record({ userId: agent.userId, action: 'plan.submitted', agentId: agent.id, site, detail: { plan_id: plan.id, txn_id: request.id, title: draft.title, steps: plan.steps.length }, ip: input.ip ?? null }, repos.activity);
  });
  d.notifier.wake();
  return { planId: plan.id, txnId: request.id, status: 'pending', expiresIn: REQUEST_LIFETIME_SEC };
}

/** The plan as stored, with a pending plan whose card expired shown (and stored) as `expired`. */
async function current(d: PlanDeps, plan: PlanRecord): Promise<PlanRecord> {
  if (plan.status !== 'pending') return plan;
  const request = await d.store.authzRequests.byId(plan.txnId);
  const now = d.clock.now();
  if (request && request.status === 'pending' && request.expiresAt > now) return plan;
  if (request?.status === 'approved' || request?.status === 'denied') return plan;
  await d.store.plans.transition(plan.id, ['pending'], 'expired', now);
  return (await d.store.plans.byId(plan.id)) ?? plan;
}

/** POST /api/v1/plans/{plan_id}/status: the agent's own plan only (404 alike otherwise). */
export async function planStatus(d: PlanDeps, input: { agentId: string; agentJwt: string; planId: string }): Promise<PlanOut> {
  const agent = await d.agents.verifyJwt(input.agentJwt, input.agentId);
  const plan = looksLikeId('p', input.planId) ? await d.store.plans.byId(input.planId) : undefined;
  if (!plan || plan.agentId !== agent.id) throw notFound('plan not found');
  return planOut(await current(d, plan));
}

/**
 * POST /api/v1/plans/result: what the click of a pre-approved step did. `txn_id` is the agent
 * approval that the step covered; later steps `after` it may run only once it is `done`.
 */
export async function planResult(d: PlanDeps, input: { agentId: string; agentJwt: string; txnId: string; result: 'done' | 'failed' | 'unknown'; ip?: string | null }): Promise<PlanOut> {
  const agent = await d.agents.verifyJwt(input.agentJwt, input.agentId);
  const use = looksLikeId('t', input.txnId) ? await d.store.plans.useByTxn(input.txnId) : undefined;
  const plan = use && (await d.store.plans.byId(use.planId));
  if (!use || !plan || plan.agentId !== agent.id) throw notFound('no plan step was used by this request');
  await d.store.plans.setStepState(plan.id, use.stepId, input.result, null);
  await d.activity.record({ userId: agent.userId, action: 'plan.step_result', agentId: agent.id, site: plan.steps.find((s) => s.id === use.stepId)?.host ?? null, detail: { plan_id: plan.id, step: use.stepId, txn_id: input.txnId, result: input.result }, ip: input.ip ?? null });
  return planOut((await d.store.plans.byId(plan.id)) ?? plan);
}

/** GET /api/plans?agent_id=: the owner's plans (of one agent, or all), ending in the last 7 days or later. */
export async function listPlans(d: PlanDeps, userId: string, agentId: string): Promise<(PlanOut & { agent_id: string; txn_id: string })[]> {
  if (agentId !== '') {
    const agent = looksLikeId('ag', agentId) ? await d.store.agents.byId(agentId) : undefined;
    if (!agent || agent.userId !== userId) throw notFound('agent not found');
  }
  const since = d.clock.now() - PLAN_LIST_DAYS * 86_400_000;
  const plans = await d.store.plans.list(agentId === '' ? { userId } : { userId, agentId }, since, PLAN_LIST_MAX);
  const out = [];
  for (const p of plans) out.push({ ...planOut(await current(d, p)), agent_id: p.agentId, txn_id: p.txnId });
  return out;
}

/** POST /api/plans/{plan_id}/withdraw: the owner ends a pending or approved plan; its card, if open, goes too. */
export async function withdrawPlan(d: PlanDeps, userId: string, planId: string, ip: string | null = null): Promise<PlanOut> {
  const plan = looksLikeId('p', planId) ? await d.store.plans.byId(planId) : undefined;
  if (!plan || plan.userId !== userId) throw notFound('plan not found');
  const now = d.clock.now();
  await d.store.transaction(async (repos) => {
    if (!(await repos.plans.transition(plan.id, ['pending', 'approved'], 'withdrawn', now))) throw conflict(`plan is ${plan.status}: only a pending or approved plan can be withdrawn`);
    const cardClosed = (await repos.authzRequests.transition(plan.txnId, ['pending'], 'denied', now)) !== undefined;
    await d.activity.record({ userId, action: 'plan.withdrawn', agentId: plan.agentId, detail: { plan_id: plan.id, txn_id: plan.txnId }, ip }, repos.activity);
    // Its card's notices in the same transaction: nothing that can fail runs after the commit.
    if (cardClosed) await d.notifier.requestSettled(userId, plan.txnId, repos);
  });
  d.notifier.wake();
  return planOut((await d.store.plans.byId(plan.id)) ?? plan);
}

/** Whether the agent of a plan may still have its steps matched (not removed, not revoked). */
export async function agentStillActive(d: Pick<PlanDeps, 'store'>, agentId: string): Promise<boolean> {
  const agent = await d.store.agents.byId(agentId);
  return agent !== undefined && !isAgentBlocked(agent);
}
