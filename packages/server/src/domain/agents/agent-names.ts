import type { AgentsRepo } from '../../store/ports/index.ts';

/**
 * Display names of all of an owner's agents, removed ones included, so that grants and old
 * activity records can still name the agent they are about.
 */
export async function agentNames(agents: AgentsRepo, userId: string): Promise<Map<string, string>> {
  return new Map((await agents.listForUser(userId, true)).map((a) => [a.id, a.name]));
}
