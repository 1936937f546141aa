import type { AgentStoppedHook } from '../agents/agents.ts';
import type { Clock } from '../../clock.ts';
import type { Notifier } from '../notifications/notifier.ts';

/**
 * Registered with `agents.onStopped`: when an agent is removed or revoked, its open requests end
 * (pending and approved-but-uncollected step-ups read `denied`) and its live grants are revoked at
 * the same `rev_seq`, in the transaction that stops the agent. The owner's devices are told to
 * dismiss the ended requests' cards (sent by the next outbox poll, once the transaction commits).
 */
export function endAgentAccess(clock: Clock, notifier: Notifier): AgentStoppedHook {
  return async (repos, agent, revSeq) => {
    const now = clock.now();
    const open = (await repos.authzRequests.listPendingForUser(agent.userId, now)).filter((r) => r.agentId === agent.id);
    await repos.authzRequests.cancelPendingForAgent(agent.id, now);
    for (const r of open) await notifier.requestSettled(agent.userId, r.id, repos);
    await repos.grants.revokeAllForAgent(agent.id, now, revSeq);
  };
}
