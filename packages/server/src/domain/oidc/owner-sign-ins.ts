/**
 * The owner's live OIDC sign-ins, for the app's grant list: each stands on the live grant of its agent
 * at its site (standing.ts), so they are keyed by agent and site.
 */
import type { Store } from '../../store/ports/index.ts';
import { storedClientName } from './client-names.ts';

export interface OwnerSignIn {
  clientId: string;
  clientName: string;
  createdAt: number;
  expiresAt: number;
}

export const signInKey = (agentId: string, site: string): string => `${agentId} ${site}`;

export async function liveSignInsByGrant(store: Store, userId: string, now: number): Promise<Map<string, OwnerSignIn[]>> {
  const live = await store.oidcSignIns.listLiveForUser(userId, now);
  const names = new Map<string, string>();
  for (const id of new Set(live.map((s) => s.clientId))) names.set(id, await storedClientName(store, id));
  const out = new Map<string, OwnerSignIn[]>();
  for (const s of live) {
    const key = signInKey(s.agentId, s.site);
    const list = out.get(key) ?? [];
    list.push({ clientId: s.clientId, clientName: names.get(s.clientId) ?? s.clientId, createdAt: s.createdAt, expiresAt: s.expiresAt });
    out.set(key, list);
  }
  return out;
}
