import { LIMITS, STEPUP_TYP, type StepupClaims } from '@mandate/protocol';
import type { SigningKeys } from '../../crypto/signing-keys.ts';
import { randomToken } from '../../crypto/random.ts';
import type { AgentRecord, AuthzRequestRecord } from '../../store/ports/index.ts';
import { seconds } from '../../clock.ts';
import { agentJkt } from '../agents/agent-key.ts';

/**
 * Mints the step-up token of an approved step-up request (decisions §5): ES256, header typ
 * `stepup+jwt`, 60 s, bound to the agent key by `cnf`. Its `jti` (128 random bits) is what the
 * site-side consumption marks used, once. `binding`: what the token is bound to instead of the agent's
 * key, for an app (no key) whose site step-up was filed with its resource pass (stepup-binding.ts).
 */
export async function mintStepupToken(keys: SigningKeys, issuer: string, request: AuthzRequestRecord, agent: AgentRecord, nowMs: number, binding?: string): Promise<{ token: string; claims: StepupClaims }> {
  const iat = seconds(nowMs);
  const jkt = binding ?? agentJkt(agent);
  const claims: StepupClaims = {
    iss: issuer,
    sub: agent.id,
    aud: request.site,
    user: request.userId,
    act: [request.action ?? ''],
    type: 'stepup',
    jti: randomToken(16),
    iat,
    exp: iat + LIMITS.stepupLifetimeSec,
    cnf: { dpop: jkt, jkt },
  };
  // The details the owner approved (decisions §29): a site that names them refuses other details.
  if (request.boundDetails) claims.details_digest = request.boundDetails.digest;
  return { token: await keys.sign({ ...claims }, STEPUP_TYP), claims };
}
