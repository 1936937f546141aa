import type { AgentApprovalDetails } from '../../store/ports/index.ts';

/**
 * The seam for plans (decisions §20; built by the plans helper): before the approval mode decides,
 * an agent approval may match a step of a plan the owner pre-approved. The plans code implements
 * this port and is injected in services.ts (`ApprovalDeps.planMatch`); the default matches nothing.
 *
 * Called once per agent approval, outside any transaction, after validation and rate limits. It
 * must not throw for "no match" (answer null); it may consume a plan step (it is then approved).
 */
export interface PlanMatchResult {
  /** Shown in Activity and the inbox notice, e.g. `plan p_... step 2`. */
  reason: string;
  /** Extra fields for the Activity record (plan id, step). */
  detail?: Record<string, unknown>;
}

/** What the agent asked: its `action` with the normalized details. */
export type PlanMatchRequest = AgentApprovalDetails & { action: string; txnId: string };

export type PlanMatch = (agentId: string, site: string, details: PlanMatchRequest, now: number) => Promise<PlanMatchResult | null>;

/** The default: no plan matches, so the approval mode (or the owner) decides. */
export const noPlanMatch: PlanMatch = async () => null;
