import type { PlanIn } from './plan-input.ts';
import { type PlanDeps, type PlanOut, listPlans, planResult, planStatus, submitPlan, withdrawPlan } from './plans.ts';
import { type PlanStepMatch, type PlanStepQuery, matchPlanStep } from './match.ts';

/** Plans (decisions §20): one entry point (`s.plans`) over the concept files of this folder. */
export class Plans {
  constructor(private readonly d: PlanDeps) {}

  /** POST /api/v1/plans. */
  submit(input: { agentId: string; agentJwt: string; plan: PlanIn; ip?: string | null }): ReturnType<typeof submitPlan> {
    return submitPlan(this.d, input);
  }

  /** POST /api/v1/plans/{plan_id}/status. */
  status(input: { agentId: string; agentJwt: string; planId: string }): Promise<PlanOut> {
    return planStatus(this.d, input);
  }

  /** POST /api/v1/plans/result. */
  result(input: { agentId: string; agentJwt: string; txnId: string; result: 'done' | 'failed' | 'unknown'; ip?: string | null }): Promise<PlanOut> {
    return planResult(this.d, input);
  }

  /** GET /api/plans?agent_id=. */
  list(userId: string, agentId: string): ReturnType<typeof listPlans> {
    return listPlans(this.d, userId, agentId);
  }

  /** POST /api/plans/{plan_id}/withdraw. */
  withdraw(userId: string, planId: string, ip?: string | null): Promise<PlanOut> {
    return withdrawPlan(this.d, userId, planId, ip ?? null);
  }

  /**
   * The seam for POST /api/v1/agent-approval (the approvals work wires it): the pre-approved plan
   * step covering this click, its use already taken, or undefined. `now` is the service clock (ms).
   */
  matchStep(q: PlanStepQuery, now: number = this.d.clock.now()): Promise<PlanStepMatch | undefined> {
    return matchPlanStep(this.d, q, now);
  }
}
