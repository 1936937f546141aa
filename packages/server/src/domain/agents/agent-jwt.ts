import { LIMITS } from '@mandate/protocol';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { publicKeyOf, verifyEs256Jwt } from '../../crypto/es256-jwt.ts';
import type { AgentRecord, AgentsRepo } from '../../store/ports/index.ts';
import { type Clock, seconds } from '../../clock.ts';
import { AppError, forbidden, unauthorized } from '../errors.ts';
import { looksLikeId } from '../ids.ts';
import { isAgentBlocked } from './blocked.ts';

export const AGENT_REVOKED = 'agent revoked by its owner';

const invalid = (why: string) => unauthorized(`invalid agent_jwt: ${why}`, { next_step: 'sign a fresh agent JWT (ES256, iss = sub = agent id, type "agent", exp at most 900 s after iat) with the agent key' });

/**
 * Verifies an agent JWT for `agentId` (decisions §4) and returns the agent. The key is looked up by
 * the claimed `iss`, never by anything in the header; a removed or revoked agent has no usable key
 * and gets 403 `agent revoked by its owner`.
 */
export async function verifyAgentJwt(agents: AgentsRepo, clock: Clock, token: unknown, agentId: string): Promise<AgentRecord> {
  if (typeof token !== 'string' || token.length === 0 || token.length > 8192) throw invalid('missing or malformed');
  let claims: ReturnType<typeof decodeJwt>;
  try {
    if (decodeProtectedHeader(token).alg !== 'ES256') throw invalid('alg must be ES256');
    claims = decodeJwt(token);
  } catch (e) {
    if (e instanceof AppError) throw e;
    throw invalid('not a JWT');
  }
  if (typeof claims.iss !== 'string' || claims.iss !== claims.sub) throw invalid('iss and sub must both be the agent id');
  if (claims.iss !== agentId) throw invalid('iss does not match agent_id');
  if (!looksLikeId('ag', agentId)) throw invalid('unknown agent');
  const agent = await agents.byId(agentId);
  // An app (decisions §28) has no key: it never authenticates as an agent, whatever it sends.
  if (!agent || agent.kind !== 'agent' || agent.publicJwk === null) throw invalid('unknown agent');
  // Worded so that the agent SDK reads it as a revocation (a 403 naming "agent" and "revoked").
  if (agent.status === 'blocked' && agent.flag !== 'revoked') {
    throw forbidden('agent revoked: the operator that made it is switched off', { next_step: 'stop: the operator that made this agent was switched off by an admin; it works again when the operator is switched on' });
  }
  if (agent.status === 'suspended' && agent.flag !== 'revoked') {
    throw forbidden('agent revoked: suspended by its owner (over the agent limit of its operator connection)', { next_step: 'stop: the owner lowered how many agents this operator may have; it works again if the owner raises the limit' });
  }
  if (isAgentBlocked(agent)) throw forbidden(AGENT_REVOKED, { next_step: 'stop: the owner removed or revoked this agent; only the owner can unblock it' });

  const now = seconds(clock.now());
  try {
    // The key imported once per distinct JWK (crypto/es256-jwt.ts), checked as jose's jwtVerify would.
    verifyEs256Jwt(token, publicKeyOf(agent.publicJwk), now);
  } catch (e) {
    const code = (e as { code?: string }).code;
    throw invalid(code === 'ERR_JWT_EXPIRED' ? 'expired' : 'signature or claims do not verify with the agent key');
  }
  const { iat, exp, type } = claims as { iat: number; exp: number; type?: unknown };
  if (type !== 'agent') throw invalid('type must be "agent"');
  if (iat > now + LIMITS.agentJwtMaxFutureIatSec) throw invalid('iat is in the future');
  if (exp - iat > LIMITS.agentJwtMaxLifetimeSec) throw invalid('exp must be at most 900 s after iat');
  return agent;
}
