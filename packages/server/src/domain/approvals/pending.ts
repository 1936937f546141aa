import type { AuthzRequestRecord } from '../../store/ports.ts';
import { agentNames } from '../agents/agent-names.ts';
import type { ApprovalDeps } from './deps.ts';

export interface PendingItem {
  request: AuthzRequestRecord;
  agentName: string;
}

/** Open (pending, unexpired) requests for the owner's agents, newest first, with agent names. */
export async function pendingForOwner(d: ApprovalDeps, userId: string): Promise<PendingItem[]> {
  const requests = await d.store.authzRequests.listPendingForUser(userId, d.clock.now());
  if (requests.length === 0) return [];
  const names = await agentNames(d.store.agents, userId);
  return requests.map((request) => ({ request, agentName: names.get(request.agentId) ?? '' }));
}
