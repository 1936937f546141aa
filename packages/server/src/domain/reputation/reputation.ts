import type { AgentFlag, ReportKind, Store } from '../../store/ports/index.ts';
import type { Clock } from '../../clock.ts';
import { findAgent } from '../agents/agents.ts';
import { isAgentBlocked } from '../agents/blocked.ts';
import { countKinds, reputationScore } from './score.ts';

export interface ReputationView {
  agent_id: string;
  score: number;
  flag: AgentFlag;
  age_days: number;
  reports: Record<ReportKind, number>;
  reporting_sites: number;
}

const DAY_MS = 86_400_000;

/** An agent's public reputation (`GET /api/v1/agents/{id}/reputation`), computed on read. */
export class Reputation {
  constructor(private readonly store: Store, private readonly clock: Clock) {}

  async of(agentId: string): Promise<ReputationView> {
    const agent = await findAgent(this.store.agents, agentId);
    // The store keeps one row per site (its latest report), so each site counts once.
    const latest = (await this.store.reports.listForAgent(agent.id)).map((r) => r.kind);
    const ageDays = Math.max(0, Math.floor((this.clock.now() - agent.createdAt) / DAY_MS));
    const { score, flag } = reputationScore({
      ageDays,
      revoked: isAgentBlocked(agent),
      flaggedSuspicious: agent.flag === 'suspicious',
      latestPerSite: latest,
    });
    return { agent_id: agent.id, score, flag, age_days: ageDays, reports: countKinds(latest), reporting_sites: latest.length };
  }
}
