import type { PassClaims, VerifyErrorCode } from '@mandate/protocol';
import { isAgentBlocked } from '../agents/blocked.ts';
import type { AgentRecord, Repos } from '../../store/ports.ts';

export type RevocationVerdict = { verdict: VerifyErrorCode; agent?: undefined } | { verdict: null; agent: AgentRecord };

/**
 * Cloud verify's revocation rule (decisions §6: revocation takes effect at once). A pass is
 * refused from the moment its agent is removed or flagged `revoked` (agent_revoked), or its grant
 * is revoked or replaced by a newer approval (grant_revoked). Reads the store on every call, so
 * every node sees a revocation made on any other node.
 */
export async function checkPassRevocation(repos: Pick<Repos, 'agents' | 'grants'>, claims: PassClaims): Promise<RevocationVerdict> {
  const [agent, grant] = await Promise.all([repos.agents.byId(claims.sub), repos.grants.byId(claims.grant)]);
  if (!agent || isAgentBlocked(agent)) return { verdict: 'agent_revoked' };
  if (!grant || grant.status !== 'active' || grant.agentId !== agent.id || grant.site !== claims.aud) {
    return { verdict: 'grant_revoked' };
  }
  return { verdict: null, agent };
}
