import type { ResourcePassClaims } from '@mandate/protocol';
import type { GrantRecord } from '../../store/ports/index.ts';
import { passTimes } from '../passes/pass-claims.ts';

export interface ResourcePassInput {
  issuer: string;
  /** The app's agent id. */
  agentId: string;
  clientId: string;
  /** The resource URL, exactly as approved: the pass's `aud`. */
  resource: string;
  /** The grant as the issuance left it. */
  grant: Pick<GrantRecord, 'id' | 'userId' | 'expiresAt'>;
  /** The scopes the grant allows now, within the sign-in's. */
  scopes: readonly string[];
  /** Epoch ms. */
  now: number;
  jti: string;
  revSeq: number;
  /** The DPoP key of the sign-in, or null for a bearer pass. */
  jkt: string | null;
}

/**
 * Claims of a pass for a protected resource (decisions §28): as every pass (10 minutes, or less when
 * the grant ends sooner; `grant` and `rev_seq` for revocation), with `aud` the resource URL exactly,
 * `client_id`, and `cnf` only for a sign-in bound to a DPoP key. No `user_info`: an app's grant
 * discloses none.
 */
export function resourcePassClaims(i: ResourcePassInput): ResourcePassClaims {
  const { iat, exp } = passTimes(i.grant, i.now);
  return {
    iss: i.issuer,
    sub: i.agentId,
    aud: i.resource,
    user: i.grant.userId,
    scope: [...i.scopes],
    client_id: i.clientId,
    type: 'access',
    iat,
    exp,
    jti: i.jti,
    grant: i.grant.id,
    rev_seq: i.revSeq,
    ...(i.jkt !== null ? { cnf: { dpop: i.jkt, jkt: i.jkt } } : {}),
  };
}
