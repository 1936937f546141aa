/**
 * Plans (decisions §20): a scheduled task's steps that the owner pre-approves on one card (the
 * request of kind `plan`, `txnId`). Times are epoch ms. A step's uses are taken by one conditional
 * UPDATE, so of racing agent approvals exactly one takes the last use.
 */
export type PlanStatus = 'pending' | 'approved' | 'denied' | 'withdrawn' | 'expired';

export type PlanStepState = 'waiting' | 'asking' | 'running' | 'done' | 'failed' | 'unknown' | 'skipped' | 'denied';

export interface PlanStepRecord {
  id: string;
  position: number;
  url: string;
  host: string;
  /** Exact path, or a prefix when it ends in `*`; null = any path. */
  path: string | null;
  button: string;
  /** The button's category when the plan was submitted (money and security steps are never pre-approved). */
  category: string;
  /** Sorted SHA-256 digests of the step's normalised texts. */
  textDigests: string[];
  after: string[];
  uses: number;
  usesLeft: number;
  approved: boolean;
  state: PlanStepState;
  reason: string | null;
}

export interface PlanRecord {
  id: string;
  userId: string;
  agentId: string;
  txnId: string;
  title: string;
  startAt: number;
  endAt: number;
  status: PlanStatus;
  createdAt: number;
  decidedAt: number | null;
  /** In position order. */
  steps: PlanStepRecord[];
}

export interface PlansRepo {
  create(plan: PlanRecord): Promise<void>;
  byId(id: string): Promise<PlanRecord | undefined>;
  byTxnId(txnId: string): Promise<PlanRecord | undefined>;
  /** The owner's plans (of one agent when `agentId` is given) ending at or after `endedAfter`, latest start first, at most `limit`. */
  list(filter: { userId: string; agentId?: string }, endedAfter: number, limit: number): Promise<PlanRecord[]>;
  /** Approved plans of the agent whose window holds `now` (start ≤ now < end), with their steps. */
  activeForAgent(agentId: string, now: number): Promise<PlanRecord[]>;
  /**
   * Compare-and-set of the plan status from one of `from` to `to`; when `approvedSteps` is given the
   * named steps are marked approved in the same statement set (call it inside a transaction). Of
   * racing callers exactly one gets true.
   */
  transition(id: string, from: PlanStatus[], to: PlanStatus, now: number, approvedSteps?: string[]): Promise<boolean>;
  /**
   * Takes one use of an approved step of an approved plan whose window holds `now`, and marks it
   * `running`: one conditional UPDATE, so racing callers never take more uses than are left.
   */
  takeUse(planId: string, stepId: string, now: number): Promise<boolean>;
  /** Remembers which agent approval (`txnId`) used which step, so the agent's result reaches the step. */
  recordUse(txnId: string, planId: string, stepId: string, now: number): Promise<void>;
  /** The plan and step an agent approval used, if one did. */
  useByTxn(txnId: string): Promise<{ planId: string; stepId: string } | undefined>;
  /** Sets a step's state (and reason); false when there is no such step. */
  setStepState(planId: string, stepId: string, state: PlanStepState, reason: string | null): Promise<boolean>;
  /** Deletes every plan of the owner (account deletion); answers how many plans went. */
  deleteForUser(userId: string): Promise<number>;
}
