import type { AuthzRequestRecord, Repos } from '../../store/ports/index.ts';
import { badRequest, conflict } from '../errors.ts';
import { preApprovable } from './plan-input.ts';
import type { Category } from './plan-categories.ts';

/**
 * The owner's answer to a plan card (kind `plan`), hooked into POST /api/txn/{txn_id}/response
 * (approvals/owner-decisions.ts). `steps` names the steps pre-approved (absent = all); `money` and
 * `security` steps are never pre-approved whatever is sent, and unknown ids are a 400.
 */
export async function chosenPlanSteps(repos: Pick<Repos, 'plans'>, request: AuthzRequestRecord, steps: readonly string[] | undefined): Promise<string[]> {
  const plan = await repos.plans.byTxnId(request.id);
  if (!plan) throw conflict('the plan of this card is gone');
  const known = new Set(plan.steps.map((s) => s.id));
  const unknown = steps?.find((id) => !known.has(id));
  if (unknown !== undefined) throw badRequest(`steps names "${unknown}", which is not a step of this plan`);
  const wanted = new Set(steps ?? known);
  return plan.steps.filter((s) => wanted.has(s.id) && preApprovable(s.category as Category)).map((s) => s.id);
}

/** Inside the approval's transaction: the plan becomes approved with the chosen steps; the others will ask. */
export async function approvePlanOfCard(repos: Repos, request: AuthzRequestRecord, steps: readonly string[] | undefined, now: number): Promise<string[]> {
  const chosen = await chosenPlanSteps(repos, request, steps);
  const plan = (await repos.plans.byTxnId(request.id))!;
  if (!(await repos.plans.transition(plan.id, ['pending'], 'approved', now, chosen))) throw conflict('the plan is not pending any more (it was withdrawn)');
  for (const s of plan.steps) if (!chosen.includes(s.id)) await repos.plans.setStepState(plan.id, s.id, 'asking', null);
  return chosen;
}

/** The owner denied the card: the plan and all its steps are denied. */
export async function denyPlanOfCard(repos: Pick<Repos, 'plans'>, request: AuthzRequestRecord, now: number): Promise<void> {
  const plan = await repos.plans.byTxnId(request.id);
  if (!plan || !(await repos.plans.transition(plan.id, ['pending'], 'denied', now))) return;
  for (const s of plan.steps) await repos.plans.setStepState(plan.id, s.id, 'denied', null);
}
