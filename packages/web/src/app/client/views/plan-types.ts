// The plan shapes of GET /api/plans (decisions §20), as this app reads them.

export interface PlanStep {
  id: string;
  button: string;
  url: string;
  state: string;
  approved: boolean;
  uses_left: number;
  /** False for money and security steps: they always ask, whatever is ticked. */
  pre_approvable: boolean;
  reason?: string;
}

export interface Plan {
  plan_id: string;
  txn_id: string;
  agent_id: string;
  title: string;
  status: string;
  start_at: number;
  end_at: number;
  steps: PlanStep[];
}
