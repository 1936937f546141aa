/**
 * Apps as agents (decisions §28): what a person's approval at the consent page creates. The first
 * approval of a client_id by an owner creates an agent of kind `app` (no key; named after the
 * client's name, marked with where it comes from); later ones reuse it while it lives. Each approval
 * gives a fresh grant for the resource (site = the resource URL's host, `resource` kept), or for a
 * plain sign-in at the redirect URI's host, replacing the app's earlier grant for the same thing.
 * Everything in one transaction under the owner's quota lock, as agent creation is.
 */
import type { AgentRecord, GrantRecord, Repos, Store } from '../../store/ports/index.ts';
import { AGENT_LIMITS, AGENT_NAME_MAX } from '../agents/agents.ts';
import { conflict } from '../errors.ts';
import { newId } from '../ids.ts';
import { RevocationSequence } from '../revocation/rev-seq.ts';

export interface AppApproval {
  userId: string;
  clientId: string;
  /** The agent's name: the client's name, marked (appName). */
  name: string;
  /** The resource URL, or null for a plain sign-in. */
  resource: string | null;
  /** The grant's site: the resource URL's host, or the redirect URI's host for a plain sign-in. */
  site: string;
  scopes: string[];
  userInfo: string[];
  now: number;
}

/** `<client name> (<mark>)`, cut to the agent name's limit (the mark kept whole when it fits). */
export function appName(clientName: string, mark: string): string {
  const suffix = ` (${mark})`;
  if (suffix.length >= AGENT_NAME_MAX - 1) return clientName.slice(0, AGENT_NAME_MAX);
  return `${clientName.slice(0, AGENT_NAME_MAX - suffix.length)}${suffix}`;
}

/** The app (created or reused) and its new grant. 409 when the owner blocked the app (unblock or remove it first) or is at the agent limit. */
export async function approveApp(store: Store, a: AppApproval): Promise<{ app: AgentRecord; grant: GrantRecord; created: boolean }> {
  return store.transaction(async (repos) => {
    await repos.quotas.lockOwner(a.userId);
    const { app, created } = await liveApp(repos, a);
    const previous = await repos.grants.listForAgent(app.id);
    // As grant-from-approval.ts: a revoked grant at the site stays listed; the new grant's passes
    // must carry a higher rev_seq than its entry.
    if (previous.some((g) => g.site === a.site && g.status === 'revoked')) await new RevocationSequence(repos.counters).advance();
    if (a.resource !== null) await repos.grants.supersedeResource(app.id, a.resource, a.now);
    else await repos.grants.supersede(app.id, a.site, a.now);
    const grant: GrantRecord = {
      id: newId('gr'), userId: a.userId, agentId: app.id, site: a.site, scopes: a.scopes, userInfo: a.userInfo, status: 'active',
      createdAt: a.now, expiresAt: null, usesLeft: null, refreshHash: null, passesIssued: 0, revokedAt: null, revSeq: null, supersededAt: null,
      resource: a.resource,
    };
    await repos.grants.create(grant);
    return { app, grant, created };
  });
}

async function liveApp(repos: Repos, a: AppApproval): Promise<{ app: AgentRecord; created: boolean }> {
  const found = await repos.agents.liveAppOf(a.userId, a.clientId);
  if (found !== undefined) {
    // Fail closed: approving in the browser does not undo the owner's own block.
    if (found.status !== 'active' || found.flag === 'revoked') throw conflict(`you blocked ${found.name}: unblock it under Agents in the app, or remove it there and approve again`);
    return { app: found, created: false };
  }
  if ((await repos.quotas.liveAgents(a.userId)) >= AGENT_LIMITS.livePerOwner) {
    throw conflict(`agent limit reached: an owner may have at most ${AGENT_LIMITS.livePerOwner} agents and apps; remove one you no longer use first`);
  }
  const app: AgentRecord = {
    id: newId('ag'), userId: a.userId, name: a.name, kind: 'app', clientId: a.clientId, publicJwk: null, jkt: null,
    status: 'active', flag: 'ok', flagRevSeq: null, createdAt: a.now, removedAt: null, unblockedAt: null, unblockedRevSeq: null,
  };
  return repos.agents.createApp(app);
}
