import type { AgentFlag, AgentRecord, AgentStatusRecord, Store } from '../../store/ports/index.ts';
import type { Activity } from '../activity/activity.ts';
import type { Clock } from '../../clock.ts';
import type { RateLimiter } from '../rate-limit.ts';
import { findAgent } from './agents.ts';
import { passwordManagerState, type PasswordManagerState } from './password-manager.ts';

export interface AgentStatusView {
  agent_id: string;
  global_flag: AgentFlag;
  /** Sites whose grant for this agent was revoked (and not approved again since). */
  revoked_sites: string[];
  jwks_url: string;
}

/** What the agent itself reads (`GET /api/v1/agent-status`): also whether it may use the password manager (decisions §17). */
export interface AgentSelfStatusView extends AgentStatusView {
  password_manager: PasswordManagerState;
}

/** What the owner's dashboard shows of an agent's own reports; `site` '' is the general status. */
export const GENERAL_SITE = '';

/** Status reports per agent per minute; the latest per site is all that is kept anyway. */
export const STATUS_REPORTS_PER_MINUTE = 60;
/**
 * Sites whose latest status is kept per agent: a report about a new site beyond them drops the
 * oldest. An agent may name any number of sites; what it reports must not grow without bound, and
 * the owner's list (GET /api/agents/{id}/statuses) is this long at most.
 */
export const STATUS_SITES_KEPT = 100;

/**
 * A removed agent has no key left and reads `revoked`, like an agent blocked by its owner; so does an
 * agent its operator's switch blocked (decisions §17), while blocked.
 */
export function globalFlag(agent: AgentRecord): AgentFlag {
  return agent.status !== 'active' ? 'revoked' : agent.flag;
}

/**
 * Agent status: what sites and the agent itself read to learn whether it is still authorized
 * (`GET /api/v1/agents/{id}/status`, `GET /api/v1/agent-status`), and the status lines an agent
 * reports for its owner's dashboard.
 */
export class AgentStatuses {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly activity: Activity,
    private readonly limiter: RateLimiter,
    private readonly baseUrl: string,
  ) {}

  /** Any agent by id, or 404 (also for ids that cannot be ours). */
  async view(agentId: string): Promise<AgentStatusView> {
    return this.viewOf(await findAgent(this.store.agents, agentId));
  }

  async viewOf(agent: AgentRecord): Promise<AgentStatusView> {
    const grants = await this.store.grants.listForAgent(agent.id);
    const sites = new Set(grants.filter((g) => g.status === 'revoked').map((g) => g.site));
    return { agent_id: agent.id, global_flag: globalFlag(agent), revoked_sites: [...sites].sort(), jwks_url: `${this.baseUrl}/api/v1/jwks` };
  }

  /**
   * The agent's own view: the public one plus its password-manager state, which only the agent
   * (and its owner) need; sites are not told.
   */
  async selfViewOf(agent: AgentRecord): Promise<AgentSelfStatusView> {
    const [view, setting] = await Promise.all([this.viewOf(agent), this.store.agents.passwordManager(agent.id)]);
    return { ...view, password_manager: passwordManagerState(setting) };
  }

  /** Keeps the latest status per agent and site, and leaves one activity record. Limited per agent (429). */
  async report(agent: AgentRecord, input: { site: string; status: string; ip: string | null }): Promise<void> {
    await this.limiter.check(`agent-status:${agent.id}`, STATUS_REPORTS_PER_MINUTE, 60);
    const now = this.clock.now();
    await this.store.agentStatuses.upsert({ agentId: agent.id, site: input.site, status: input.status, createdAt: now }, STATUS_SITES_KEPT);
    await this.activity.record({
      userId: agent.userId,
      action: 'agent.status',
      agentId: agent.id,
      site: input.site === GENERAL_SITE ? null : input.site,
      detail: { status: input.status },
      ip: input.ip,
    });
  }

  /** The latest status per site, newest first (at most STATUS_SITES_KEPT). The caller has checked that the agent is the owner's. */
  latest(agentId: string): Promise<AgentStatusRecord[]> {
    return this.store.agentStatuses.listForAgent(agentId, STATUS_SITES_KEPT);
  }
}
