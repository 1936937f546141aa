import type { PlanRecord, PlanStepRecord, Store } from '../../store/ports/index.ts';
import type { Activity } from '../activity/activity.ts';
import { preApprovable } from './plan-input.ts';
import type { Category } from './plan-categories.ts';
import { sameDigestSet } from './text-digest.ts';

/** What an agent approval (POST /api/v1/agent-approval, decisions §19) tells about the click it asks for. */
export interface PlanStepQuery {
  agentId: string;
  /** `details.host` (else `site`): the host of the page, lower case. */
  host: string;
  /** `details.label` (else `action`): the button's words. */
  label: string;
  /** `details.path`, if sent. */
  path?: string | null;
  /** `details.text_digests`, if sent (compared as a set). */
  textDigests?: readonly string[] | null;
  /** The agent approval's txn_id: recorded with the use, so POST /api/v1/plans/result reaches the step. */
  txnId?: string;
}

export interface PlanStepMatch {
  planId: string;
  stepId: string;
  title: string;
  button: string;
  usesLeft: number;
}

/** The label's words, lower case, separated by one space: "Add  to Cart" = "add to cart". */
const labelWords = (label: string): string => label.toLowerCase().split(/\s+/u).filter(Boolean).join(' ');

/** The path rule: no path in the step = any path; a trailing `*` = that prefix; else the exact path. */
export function pathMatches(rule: string | null, path: string | null | undefined): boolean {
  if (rule === null) return true;
  if (path === null || path === undefined) return false;
  return rule.endsWith('*') ? path.startsWith(rule.slice(0, -1)) : path === rule;
}

/** Whether a step of an approved, active plan covers the click (everything but the atomic use). */
export function stepCovers(plan: PlanRecord, step: PlanStepRecord, q: PlanStepQuery): boolean {
  if (!step.approved || !preApprovable(step.category as Category) || step.usesLeft <= 0) return false;
  if (step.host !== q.host.toLowerCase()) return false;
  if (labelWords(step.button) !== labelWords(q.label)) return false;
  if (!pathMatches(step.path, q.path)) return false;
  if (!sameDigestSet(step.textDigests, q.textDigests ?? [])) return false;
  const done = new Set(plan.steps.filter((s) => s.state === 'done').map((s) => s.id));
  return step.after.every((id) => done.has(id));
}

/**
 * Decisions §20: the step of an approved plan that pre-approves this click, with one of its uses
 * taken, or undefined (then the agent approval goes on as decided by the approval modes). Same
 * agent, inside the window, same host, same label words, the path rule, the same digest set, uses
 * left, `after` steps done. The use is taken by one conditional UPDATE (PlansRepo.takeUse): of
 * racing agent approvals exactly one takes the last use; a loser tries the next covering step.
 */
export async function matchPlanStep(d: { store: Store; activity?: Activity }, q: PlanStepQuery, now: number): Promise<PlanStepMatch | undefined> {
  for (const plan of await d.store.plans.activeForAgent(q.agentId, now)) {
    for (const step of plan.steps) {
      if (!stepCovers(plan, step, q)) continue;
      const taken = await d.store.transaction(async (repos) => {
        if (!(await repos.plans.takeUse(plan.id, step.id, now))) return false;
        if (q.txnId !== undefined) await repos.plans.recordUse(q.txnId, plan.id, step.id, now);
        await d.activity?.record({ userId: plan.userId, action: 'plan.step_used', agentId: plan.agentId, site: step.host, detail: { plan_id: plan.id, step: step.id, ...(q.txnId !== undefined ? { txn_id: q.txnId } : {}) } }, repos.activity);
        return true;
      });
      if (taken) return { planId: plan.id, stepId: step.id, title: plan.title, button: step.button, usesLeft: step.usesLeft - 1 };
    }
  }
  return undefined;
}
