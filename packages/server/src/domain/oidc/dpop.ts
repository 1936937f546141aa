/**
 * DPoP at the provider's own endpoints (RFC 9449): a proof at /oidc/token binds the sign-in's access
 * tokens to the proof's key (`cnf.jkt`, `token_type: DPoP`), and a proof with `ath` goes with a bound
 * access token at /oidc/userinfo. `dpop_jkt` at /oidc/authorize binds the code to a key before the
 * agent ever reaches the token endpoint. Each proof's `jti` is single-use in the shared store.
 */
import { accessTokenHash, LIMITS, ProtocolError, normalizeHtu, verifyDpopSignature } from '@mandate/protocol';
import { seconds } from '../../clock.ts';
import type { OidcDeps } from './deps.ts';
import { OAuthError } from './oauth-error.ts';

const JTI_NAMESPACE = 'oidc-dpop-jti';
/** An RFC 7638 thumbprint of a P-256 key: base64url of a SHA-256. */
export const JKT = /^[A-Za-z0-9_-]{43}$/;

export interface DpopCheck {
  method: 'GET' | 'POST';
  /** The endpoint's address, as the proof's `htu` must name it. */
  url: string;
  /** With an access token (userinfo): `ath` must hash it. */
  accessToken?: string;
  /** The key the token or code is bound to: the proof must be signed by it. */
  jkt?: string | null;
}

/** How a refused proof is answered: 400 at the token endpoint, 401 with a DPoP challenge at userinfo. */
export type ProofError = (why: string) => OAuthError;

const invalidDpopProof: ProofError = (why) => new OAuthError('invalid_dpop_proof', `the DPoP proof ${why}`);

/** Checks one proof and consumes its jti; answers the thumbprint of its key. */
export async function checkDpopProof(d: OidcDeps, proof: string, expect: DpopCheck, refuse: ProofError = invalidDpopProof): Promise<string> {
  let verified;
  try {
    verified = await verifyDpopSignature(proof);
  } catch (e) {
    if (e instanceof ProtocolError) throw refuse(e.message.replace(/^the DPoP proof /, ''));
    throw e;
  }
  const { claims, jkt } = verified;
  const now = d.clock.now();
  if (claims.htm !== expect.method) throw refuse(`htm must be ${expect.method}`);
  if (normalizeHtu(claims.htu) !== normalizeHtu(expect.url)) throw refuse(`htu must be ${expect.url}`);
  if (Math.abs(seconds(now) - claims.iat) > LIMITS.dpopIatToleranceSec) throw refuse(`iat must be within ${LIMITS.dpopIatToleranceSec} s of the service's clock`);
  if (expect.accessToken !== undefined && claims.ath !== accessTokenHash(expect.accessToken)) throw refuse('ath must be the hash of the access token sent with it');
  if (expect.jkt !== undefined && expect.jkt !== null && jkt !== expect.jkt) throw refuse('is signed by another key than the one the token is bound to');
  const keep = (claims.iat + LIMITS.dpopIatToleranceSec) * 1000 + 60_000;
  if (!(await d.store.singleUse.consume(JTI_NAMESPACE, claims.jti, Math.max(keep, now + 60_000), now))) throw refuse('was used already (its jti is single-use)');
  return jkt;
}
