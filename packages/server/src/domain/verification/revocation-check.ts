import type { PassClaims, VerifyErrorCode } from '@mandate/protocol';
import { grantAudience } from '../grants/audience.ts';
import { isAgentBlocked } from '../agents/blocked.ts';
import type { AgentStanding, AgentWithGrant, Repos } from '../../store/ports/index.ts';

export type RevocationVerdict = { verdict: VerifyErrorCode; agent?: undefined } | { verdict: null; agent: AgentStanding };

/**
 * Cloud verify's revocation rule (decisions §6: revocation takes effect at once). A pass is
 * refused from the moment its agent is removed or flagged `revoked` (agent_revoked), or its grant
 * is revoked or replaced by a newer approval (grant_revoked). The same for an app's resource pass
 * (decisions §28), whose grant's audience is its resource URL (grants/audience.ts).
 *
 * Multi-node: the agent and its grant are read from the shared store on every call, in ONE query
 * (agent joined with the grant), and nothing about them is cached on the node. A revocation
 * committed on any node is therefore seen by the next verify on every node. A node-local cache
 * would need a way to learn of revocations made elsewhere before answering; checking the shared
 * `rev_seq` for that costs the same round trip as this read, and a notification (LISTEN/NOTIFY)
 * arrives late by design, which decisions §6 does not allow.
 */
/** What the rule reads of a pass: an agent's pass or an app's resource pass alike. */
export type PassStandingClaims = Pick<PassClaims, 'sub' | 'grant' | 'aud' | 'rev_seq'>;

export async function checkPassRevocation(repos: Pick<Repos, 'agents'>, claims: PassStandingClaims): Promise<RevocationVerdict> {
  return revocationVerdict(await repos.agents.withGrant(claims.sub, claims.grant), claims);
}

/** The rule of checkPassRevocation over an agent and grant already read. */
export function revocationVerdict(found: AgentWithGrant | undefined, claims: PassStandingClaims): RevocationVerdict {
  if (!found || isAgentBlocked(found.agent)) return { verdict: 'agent_revoked' };
  // A pass minted before a block that was lifted since stays refused (decisions §17: after the
  // operator switch's on, old passes stay refused; the snapshot lists the lift at the same rev_seq).
  const lifted = found.agent.unblockedRevSeq;
  if (lifted !== null && claims.rev_seq <= lifted) return { verdict: 'agent_revoked' };
  const { agent, grant } = found;
  if (!grant || grant.status !== 'active' || grant.agentId !== agent.id || grantAudience(grant) !== claims.aud) {
    return { verdict: 'grant_revoked' };
  }
  return { verdict: null, agent };
}
