import type { AuthzRequestRecord } from '../../store/ports/index.ts';
import { agentNames } from '../agents/agent-names.ts';
import { QUOTAS } from '../quotas.ts';
import type { ApprovalDeps } from './deps.ts';

export interface PendingItem {
  request: AuthzRequestRecord;
  agentName: string;
}

/**
 * The most open requests `pending` of GET /api/me lists. The open-requests quota keeps an owner at
 * or below it already; the cap holds the answer's size even so (rows filed before the quota existed,
 * or a quota raised later).
 */
export const PENDING_CAP = QUOTAS.openRequestsPerOwner;

/** Open (pending, unexpired) requests for the owner's agents, newest first (at most PENDING_CAP), with agent names. */
export async function pendingForOwner(d: ApprovalDeps, userId: string): Promise<PendingItem[]> {
  const requests = await d.store.authzRequests.listPendingForUser(userId, d.clock.now(), PENDING_CAP);
  if (requests.length === 0) return [];
  const names = await agentNames(d.store.agents, userId);
  return requests.map((request) => ({ request, agentName: names.get(request.agentId) ?? '' }));
}
