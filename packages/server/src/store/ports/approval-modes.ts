/** Approval modes of an agent (decisions §19): one row per site (or `*`), and the agent's pause scope. */

export type ApprovalMode = 'ask' | 'smart' | 'allow';
export type PauseScope = 'domain' | 'host';

export interface ApprovalModeRow {
  agentId: string;
  /** A host name, or `*` for the agent's default. */
  site: string;
  mode: ApprovalMode;
  hourlyLimit: number;
}

export interface ApprovalModesRepo {
  /** Every row of the agent, in site order. */
  list(agentId: string): Promise<ApprovalModeRow[]>;
  /** Inserts or replaces the agent's row for `site`. */
  put(row: ApprovalModeRow): Promise<void>;
  /** Removes the agent's row for `site`; answers whether there was one. */
  remove(agentId: string, site: string): Promise<boolean>;
  /** The agent's pause scope; undefined when never set. */
  pauseScope(agentId: string): Promise<PauseScope | undefined>;
  setPauseScope(agentId: string, scope: PauseScope): Promise<void>;
  /** Forgets all of the agent (it was removed). */
  removeAgent(agentId: string): Promise<void>;
}
