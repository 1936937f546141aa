import { compactVerify } from 'jose';
import { parseAgentJwtClaims } from './claim-shapes.ts';
import type { AgentJwtClaims } from './claims.ts';
import { ProtocolError } from './errors.ts';
import { decodeJsonBytes, splitCompact } from './jws.ts';
import type { VerificationKey } from './keys.ts';
import { toVerifyKey } from './keys.ts';
import { LIMITS } from './limits.ts';
import { isNonEmptyString } from './shape.ts';

export type VerifyAgentJwtOptions = {
  /** The agent id from the request body or query; iss and sub must both equal it. */
  agentId: string;
  /** The agent's current public keys, looked up by agentId (never by anything in the token). */
  keys: readonly VerificationKey[];
  /** Unix seconds. */
  now: number;
};

const MAX_AGENT_JWT_LENGTH = 8 * 1024;

/**
 * Verifies an agent JWT (decisions.md §4): ES256 only, signature by one of the agent's keys,
 * iss = sub = agentId, type `agent`, iat at most 60 s ahead, exp in the future, exp - iat
 * within 1..900 s. Codes: invalid_token, token_expired. A removed or revoked agent simply has
 * no keys, so everything it signs is invalid_token.
 */
export async function verifyAgentJwt(token: unknown, o: VerifyAgentJwtOptions): Promise<AgentJwtClaims> {
  if (!isNonEmptyString(o.agentId) || !Number.isFinite(o.now)) {
    throw new ProtocolError('invalid_request', 'agent id and clock are required');
  }
  const parts = splitCompact(token, MAX_AGENT_JWT_LENGTH);
  if (parts === null || typeof token !== 'string') {
    throw new ProtocolError('invalid_token', 'the agent JWT is not a well-formed JWS');
  }
  if (parts.header['alg'] !== 'ES256') throw new ProtocolError('invalid_token', 'the agent JWT alg must be ES256');

  let payloadBytes: Uint8Array | undefined;
  for (const candidate of o.keys) {
    try {
      const key = await toVerifyKey(candidate);
      payloadBytes = (await compactVerify(token, key, { algorithms: ['ES256'] })).payload;
      break;
    } catch {
      // try the agent's next key (key rotation keeps more than one current)
    }
  }
  if (payloadBytes === undefined) {
    throw new ProtocolError('invalid_token', 'the agent JWT is not signed by a key of this agent');
  }
  const payload = decodeJsonBytes(payloadBytes);
  if (payload === null) throw new ProtocolError('invalid_token', 'the agent JWT payload is not a JSON object');
  const claims = parseAgentJwtClaims(payload, 'invalid_token');
  if (claims.iss !== o.agentId || claims.sub !== o.agentId) {
    throw new ProtocolError('invalid_token', 'the agent JWT iss and sub must be the agent id');
  }
  if (claims.iat > o.now + LIMITS.agentJwtMaxFutureIatSec) {
    throw new ProtocolError('invalid_token', 'the agent JWT iat is in the future');
  }
  const lifetime = claims.exp - claims.iat;
  if (lifetime <= 0 || lifetime > LIMITS.agentJwtMaxLifetimeSec) {
    throw new ProtocolError('invalid_token', `the agent JWT may live at most ${LIMITS.agentJwtMaxLifetimeSec} s`);
  }
  if (o.now >= claims.exp) throw new ProtocolError('token_expired', 'the agent JWT has expired');
  return claims;
}
