import type { AgentStoppedHook } from '../agents/agents.ts';
import type { Clock } from '../clock.ts';

/**
 * Registered with `agents.onStopped`: when an agent is removed or revoked, its open requests end
 * (pending and approved-but-uncollected step-ups read `denied`) and its live grants are revoked at
 * the same `rev_seq`, in the transaction that stops the agent.
 */
export function endAgentAccess(clock: Clock): AgentStoppedHook {
  return async (repos, agent, revSeq) => {
    const now = clock.now();
    await repos.authzRequests.cancelPendingForAgent(agent.id, now);
    await repos.grants.revokeAllForAgent(agent.id, now, revSeq);
  };
}
