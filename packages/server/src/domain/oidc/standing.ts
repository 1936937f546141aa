/**
 * Whether a sign-in still stands (decisions §18): not ended, not past its 30 days, its agent kept and
 * not blocked, and a live grant of that agent at the sign-in's site that still includes `openid`.
 * The grant is looked up by agent and site, not by the id the sign-in started under: a later
 * approval at the same site supersedes the grant, and the sign-in goes on under the new one as long
 * as the owner still allows signing in there. One rule for refresh, userinfo, revoke and introspect.
 *
 * A sign-in for a protected resource (decisions §28, `resource` set) stands on its app's live grant
 * for exactly that resource (found by agent and resource, as a later approval supersedes it), with
 * no `openid` needed: the app is a kind `app` agent of that client, not removed or blocked.
 */
import type { AgentRecord, GrantRecord, OidcSignInRecord } from '../../store/ports/index.ts';
import { isAgentBlocked } from '../agents/blocked.ts';
import { isGrantLive, liveGrant } from '../grants/usable.ts';
import type { OidcDeps } from './deps.ts';

export interface SignInBasis {
  agent: AgentRecord;
  grant: GrantRecord;
}

export const isSignInOpen = (s: OidcSignInRecord, now: number): boolean => s.endedAt === null && s.expiresAt > now;

export async function signInBasis(d: Pick<OidcDeps, 'store'>, s: OidcSignInRecord, now: number): Promise<SignInBasis | undefined> {
  if (!isSignInOpen(s, now)) return undefined;
  if (s.resource !== null) return resourceBasis(d, s, s.resource, now);
  const [agent, grant] = await Promise.all([d.store.agents.byId(s.agentId), liveGrant(d.store.grants, s.agentId, s.site, now)]);
  if (!agent || isAgentBlocked(agent) || !grant || !grant.scopes.includes('openid')) return undefined;
  return { agent, grant };
}

async function resourceBasis(d: Pick<OidcDeps, 'store'>, s: OidcSignInRecord, resource: string, now: number): Promise<SignInBasis | undefined> {
  const [agent, grant] = await Promise.all([d.store.agents.byId(s.agentId), d.store.grants.activeForResource(s.agentId, resource)]);
  if (!agent || agent.kind !== 'app' || agent.clientId !== s.clientId || isAgentBlocked(agent)) return undefined;
  if (!grant || !isGrantLive(grant, now)) return undefined;
  return { agent, grant };
}
