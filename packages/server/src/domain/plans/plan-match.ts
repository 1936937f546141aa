/**
 * Plans as the agent-approval seam (modes/plan-match.ts): an agent approval that matches a chosen
 * step of an approved plan exactly (match.ts) is approved without a card; the step's use is taken
 * atomically and recorded under the approval's txn_id, so POST /api/v1/plans/result reaches it.
 */
import type { PlanMatch } from '../modes/plan-match.ts';
import type { Plans } from './plans-service.ts';

export function planMatchOf(plans: Pick<Plans, 'matchStep'>): PlanMatch {
  return async (agentId, site, d, now) => {
    const step = await plans.matchStep({ agentId, host: d.host ?? site, label: d.label ?? d.action, path: d.path ?? null, textDigests: d.text_digests ?? null, txnId: d.txnId }, now);
    if (!step) return null;
    return { reason: `step "${step.button}" of the plan "${step.title}" you pre-approved`, detail: { plan_id: step.planId, step: step.stepId, uses_left: step.usesLeft } };
  };
}
