import type { AgentRecord } from '../../store/ports/index.ts';

/**
 * Removed, flagged `revoked` by its owner, or `blocked` by its operator's switch (decisions §17):
 * such an agent may do nothing, its passes and step-ups are refused, and the revocation snapshot
 * lists it as `revoked`. Any status but `active` stops the agent, so a status added later stops it
 * too unless this says otherwise.
 */
export function isAgentBlocked(agent: Pick<AgentRecord, 'status' | 'flag'>): boolean {
  return agent.status !== 'active' || agent.flag === 'revoked';
}
