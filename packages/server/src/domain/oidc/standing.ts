/**
 * Whether a sign-in still stands (decisions §18): not ended, not past its 30 days, its agent kept and
 * not blocked, and a live grant of that agent at the sign-in's site that still includes `openid`.
 * The grant is looked up by agent and site, not by the id the sign-in started under: a later
 * approval at the same site supersedes the grant, and the sign-in goes on under the new one as long
 * as the owner still allows signing in there. One rule for refresh, userinfo, revoke and introspect.
 */
import type { AgentRecord, GrantRecord, OidcSignInRecord } from '../../store/ports/index.ts';
import { isAgentBlocked } from '../agents/blocked.ts';
import { liveGrant } from '../grants/usable.ts';
import type { OidcDeps } from './deps.ts';

export interface SignInBasis {
  agent: AgentRecord;
  grant: GrantRecord;
}

export const isSignInOpen = (s: OidcSignInRecord, now: number): boolean => s.endedAt === null && s.expiresAt > now;

export async function signInBasis(d: Pick<OidcDeps, 'store'>, s: OidcSignInRecord, now: number): Promise<SignInBasis | undefined> {
  if (!isSignInOpen(s, now)) return undefined;
  const [agent, grant] = await Promise.all([d.store.agents.byId(s.agentId), liveGrant(d.store.grants, s.agentId, s.site, now)]);
  if (!agent || isAgentBlocked(agent) || !grant || !grant.scopes.includes('openid')) return undefined;
  return { agent, grant };
}
