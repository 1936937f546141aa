import type { AgentRecord } from '../../store/ports/index.ts';

/**
 * Removed, or flagged `revoked` by its owner: such an agent may do nothing any more, its passes and
 * step-ups are refused, and the revocation snapshot lists it as `revoked`.
 */
export function isAgentBlocked(agent: Pick<AgentRecord, 'status' | 'flag'>): boolean {
  return agent.status === 'removed' || agent.flag === 'revoked';
}
