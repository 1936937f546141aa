/**
 * Passes for protected resources (decisions §28): what an MCP server (or any OAuth resource server)
 * protected by Mandate accepts. One definition for the service (cloud verify, the site step-up) and
 * the site SDK's `mcpAuth` (local mode).
 *
 * - `aud` must be the resource URL exactly (RFC 8707): a pass for one resource is refused at every
 *   other, and a site's agent pass (whose `aud` is a host) is never a resource pass.
 * - A pass with `cnf` was bound to a DPoP key at the token endpoint: it must come with the `DPoP`
 *   scheme and a proof by that key for this request (RFC 9449 §7). A pass without `cnf` is a bearer
 *   pass and must come with the `Bearer` scheme (a client cannot present a bound pass as a bearer one).
 */
import { parseResourcePassClaims } from './claim-shapes.ts';
import type { ResourcePassClaims } from './claims.ts';
import { PASS_TYP } from './claims.ts';
import { verifyDpopProof } from './dpop.ts';
import type { SignatureCheck } from './es256.ts';
import type { VerifyErrorCode } from './errors.ts';
import { ProtocolError } from './errors.ts';
import type { ServiceKeys } from './keys.ts';
import { toResolver } from './keys.ts';
import { LIMITS } from './limits.ts';
import { verifyServiceTokenWithKey } from './service-token.ts';
import { isNonEmptyString } from './shape.ts';

export type VerifyResourcePassOptions = {
  keys: ServiceKeys;
  issuer: string;
  /** Unix seconds. */
  now: number;
  /** The resource URL the pass must name as its `aud`, exactly (compared as strings). */
  resource: string;
};

/** Signature, typ `at+jwt`, `type` access, expiry, claim shapes, `client_id`, and `aud` = resource. */
export async function verifyResourcePass(token: unknown, o: VerifyResourcePassOptions): Promise<ResourcePassClaims> {
  if (!isNonEmptyString(o.resource)) throw new ProtocolError('invalid_request', 'verifier misconfigured: resource is required');
  const verified = await verifyServiceTokenWithKey(token, {
    keys: toResolver(o.keys),
    issuer: o.issuer,
    now: o.now,
    typ: PASS_TYP,
    type: 'access',
    checkExp: true,
  });
  const claims = parseResourcePassClaims(verified.payload, 'invalid_token');
  if (claims.aud !== o.resource) throw new ProtocolError('wrong_site', 'the access token was issued for another resource');
  return claims;
}

/** How the pass came: `Authorization: Bearer …` or `Authorization: DPoP …` (with a `DPoP` header). */
export type ResourceTokenScheme = 'Bearer' | 'DPoP';

export type VerifyResourceRequestInput = VerifyResourcePassOptions & {
  accessToken: unknown;
  scheme: ResourceTokenScheme;
  /** The `DPoP` header, when sent. */
  dpop?: unknown;
  method: string;
  /** The URL the request was made to (the proof's `htu`). */
  url: string;
  /** Revocation: 'agent_revoked' / 'grant_revoked', or null when the pass may be used. */
  isRevoked?: (claims: ResourcePassClaims) => Promise<VerifyErrorCode | null>;
  /**
   * Records a DPoP proof's jti; true if it was new, false if already seen (across all nodes). Called
   * last, only for an otherwise valid request with a DPoP-bound pass.
   */
  consumeJti: (jti: string, expiresAtSec: number) => Promise<boolean>;
  proofSignatureCheck?: SignatureCheck;
};

export type VerifiedResourceRequest = { claims: ResourcePassClaims; proof: { jti: string; jkt: string } | null };

/** The pass, the scheme it came with, its DPoP proof when bound, revocation, then the proof's jti. */
export async function verifyResourceRequest(i: VerifyResourceRequestInput): Promise<VerifiedResourceRequest> {
  if (!isNonEmptyString(i.method) || !isNonEmptyString(i.url)) throw new ProtocolError('invalid_request', 'method and url are required');
  const claims = await verifyResourcePass(i.accessToken, i);
  if (typeof i.accessToken !== 'string') throw new ProtocolError('invalid_token'); // unreachable, narrows
  let proof: VerifiedResourceRequest['proof'] = null;
  if (claims.cnf !== undefined) {
    if (i.scheme !== 'DPoP') throw new ProtocolError('invalid_token', 'this pass is bound to a DPoP key: send it with the DPoP scheme and a proof');
    if (typeof i.dpop !== 'string' || i.dpop.length === 0) throw new ProtocolError('invalid_dpop', 'the DPoP proof is missing');
    const verified = await verifyDpopProof(i.dpop, {
      method: i.method,
      url: i.url,
      accessToken: i.accessToken,
      now: i.now,
      jkt: claims.cnf.jkt,
      ...(i.proofSignatureCheck === undefined ? {} : { signatureCheck: i.proofSignatureCheck }),
    });
    proof = { jti: verified.jti, jkt: verified.jkt };
  } else if (i.scheme !== 'Bearer') {
    throw new ProtocolError('invalid_token', 'this pass is not bound to a DPoP key: send it with the Bearer scheme');
  }
  if (i.isRevoked !== undefined) {
    const verdict = await i.isRevoked(claims);
    if (verdict !== null) throw new ProtocolError(verdict);
  }
  if (proof !== null && !(await i.consumeJti(proof.jti, Math.floor(i.now) + LIMITS.dpopJtiRetentionSec))) {
    throw new ProtocolError('dpop_replay');
  }
  return { claims, proof };
}
