/** Sites' reports on agents and agents' own statuses (reputation). Times are epoch ms. */

export type ReportKind = 'good' | 'spam' | 'abuse' | 'fraud' | 'policy' | 'scraping';

export interface ReportRecord {
  agentId: string;
  site: string;
  kind: ReportKind;
  detail: string;
  createdAt: number;
}

export interface ReportsRepo {
  /**
   * A site's latest report replaces its previous one (each site counts once), unless the previous
   * one's kind is in `keep`; decided in one statement. Returns whether the report was stored.
   */
  upsert(report: ReportRecord, keep?: readonly ReportKind[]): Promise<boolean>;
  listForAgent(agentId: string): Promise<ReportRecord[]>;
}

export interface AgentStatusRecord {
  agentId: string;
  site: string;
  status: string;
  createdAt: number;
}

export interface AgentStatusesRepo {
  /**
   * Keeps the latest status per agent and site; then only the agent's `keep` newest sites stay
   * (an agent may name any number of sites: its statuses must not grow without bound).
   */
  upsert(status: AgentStatusRecord, keep?: number): Promise<void>;
  /** Newest first; at most `limit` when given. */
  listForAgent(agentId: string, limit?: number): Promise<AgentStatusRecord[]>;
}
