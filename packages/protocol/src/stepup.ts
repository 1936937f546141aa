import { parseStepupClaims } from './claim-shapes.ts';
import type { StepupClaims } from './claims.ts';
import { STEPUP_TYP } from './claims.ts';
import { ProtocolError } from './errors.ts';
import type { ServiceKeys } from './keys.ts';
import { verifyServiceToken } from './service-token.ts';

export type VerifyStepupOptions = {
  keys: ServiceKeys;
  issuer: string;
  /** Unix seconds. */
  now: number;
  /** When given, `aud` must equal it (stepup_wrong_site). */
  site?: string;
  /** When given, `act` must contain it exactly (stepup_wrong_action). */
  action?: string;
  /** When given, `sub` must equal it: the step-up belongs to the agent presenting the pass. */
  agentId?: string;
  /** When given, `cnf.dpop` must equal it: same agent key as the pass. */
  jkt?: string;
  /** When given, `user` must equal it: approved by the person of the pass. Checked last. */
  userId?: string;
  /**
   * When given, the token's `details_digest` must equal it (stepup_wrong_details): a token approved
   * for other details, or for none, is refused. Absent: the caller does not care which details.
   */
  detailsDigest?: string;
};

/**
 * Verifies a step-up token's signature and claims. Single use is NOT checked here: the caller
 * consumes `jti` atomically in its store (decisions.md §5) after this succeeds.
 * Codes: stepup_invalid, stepup_used_or_expired (expired), stepup_wrong_site, stepup_wrong_action,
 * stepup_wrong_details.
 */
export async function verifyStepupToken(token: unknown, o: VerifyStepupOptions): Promise<StepupClaims> {
  const payload = await verifyServiceToken(token, {
    keys: o.keys,
    issuer: o.issuer,
    now: o.now,
    typ: STEPUP_TYP,
    type: 'stepup',
    codes: { invalid: 'stepup_invalid', expired: 'stepup_used_or_expired' },
  });
  const claims = parseStepupClaims(payload, 'stepup_invalid');
  if (o.agentId !== undefined && claims.sub !== o.agentId) {
    throw new ProtocolError('stepup_invalid', 'the step-up token belongs to another agent');
  }
  if (o.jkt !== undefined && claims.cnf.dpop !== o.jkt) {
    throw new ProtocolError('stepup_invalid', 'the step-up token is bound to another key');
  }
  if (o.site !== undefined && claims.aud !== o.site) throw new ProtocolError('stepup_wrong_site');
  if (o.action !== undefined && !claims.act.includes(o.action)) throw new ProtocolError('stepup_wrong_action');
  if (o.detailsDigest !== undefined && claims.details_digest !== o.detailsDigest) throw new ProtocolError('stepup_wrong_details');
  if (o.userId !== undefined && claims.user !== o.userId) {
    throw new ProtocolError('stepup_invalid', 'the step-up token was approved by another person');
  }
  return claims;
}
