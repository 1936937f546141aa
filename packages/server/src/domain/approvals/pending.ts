import type { AuthzRequestRecord } from '../../store/ports/index.ts';
import { type AppMark, appMark } from '../apps/client-host.ts';
import { QUOTAS } from '../quotas.ts';
import type { ApprovalDeps } from './deps.ts';

/** The connected app a request is for (decisions §28), and the resource URL of the grant it runs under. */
export interface PendingApp extends AppMark {
  resource: string | null;
}

export interface PendingItem {
  request: AuthzRequestRecord;
  agentName: string;
  /** Set when the request's agent is an app (kind `app`): the card names the app, its host and the resource. */
  app?: PendingApp;
}

/**
 * The most open requests `pending` of GET /api/me lists. The open-requests quota keeps an owner at
 * or below it already; the cap holds the answer's size even so (rows filed before the quota existed,
 * or a quota raised later).
 */
export const PENDING_CAP = QUOTAS.openRequestsPerOwner;

/** Open (pending, unexpired) requests for the owner's agents, newest first (at most PENDING_CAP), with agent names and, for apps, what marks them. */
export async function pendingForOwner(d: ApprovalDeps, userId: string): Promise<PendingItem[]> {
  const requests = await d.store.authzRequests.listPendingForUser(userId, d.clock.now(), PENDING_CAP);
  if (requests.length === 0) return [];
  // Removed agents too, as agentNames reads them: a request outliving its agent still names it.
  const agents = new Map((await d.store.agents.listForUser(userId, true)).map((a) => [a.id, a]));
  return Promise.all(requests.map(async (request) => {
    const agent = agents.get(request.agentId);
    const mark = agent ? appMark(agent) : null;
    const item: PendingItem = { request, agentName: agent?.name ?? '' };
    if (mark) item.app = { ...mark, resource: await grantResource(d, request) };
    return item;
  }));
}

/** The resource of the grant an app's request runs under (a site step-up names its grant); null when none. */
async function grantResource(d: ApprovalDeps, request: AuthzRequestRecord): Promise<string | null> {
  if (request.grantId === null) return null;
  return (await d.store.grants.byId(request.grantId))?.resource ?? null;
}
