import { parsePassClaims } from './claim-shapes.ts';
import type { PassClaims } from './claims.ts';
import { PASS_TYP } from './claims.ts';
import { type DpopExpectation, verifyDpopProof, verifyDpopProofWhile } from './dpop.ts';
import type { VerifyErrorCode } from './errors.ts';
import { ProtocolError } from './errors.ts';
import { htuHostname } from './htu.ts';
import type { ServiceKeys } from './keys.ts';
import { LIMITS } from './limits.ts';
import { isNonEmptyString } from './shape.ts';
import { verifyServiceTokenWithKey } from './service-token.ts';
import { toResolver } from './keys.ts';
import type { VerifiedPassCache } from './verified-pass-cache.ts';
import type { SignatureCheck } from './es256.ts';

export type VerifyPassOptions = {
  keys: ServiceKeys;
  issuer: string;
  /** Unix seconds. */
  now: number;
  /** When given, `aud` must equal it exactly; `url` may then be any address of the site. */
  site?: string;
  /** Without `site`, `aud` must equal this URL's lower-cased host name (no port). */
  url?: string;
  /**
   * Reports only (decisions.md §9): accept an expired pass if minted at most this many seconds
   * ago (LIMITS.reportPassMaxAgeSec). Never use it for access decisions.
   */
  allowExpiredWithinSec?: number;
  /**
   * Remembers passes whose signature verified, so a pass seen again costs no second signature check
   * (see VerifiedPassCache for what a hit skips). Not used with allowExpiredWithinSec.
   */
  passCache?: VerifiedPassCache;
};

/** The audience a pass must carry for this request (interface.md, POST /api/v1/verify). */
function expectedAudience(site: string | undefined, url: string | undefined): string {
  if (site !== undefined) {
    if (!isNonEmptyString(site)) throw new ProtocolError('invalid_request', 'site must be a non-empty string');
    return site;
  }
  if (url === undefined) throw new ProtocolError('invalid_request', 'site or url is required');
  // Vets the URL as normalizeHtu does (http/https, parsable, has a host); the URL parser lower-cases hosts.
  return htuHostname(url);
}

/**
 * Verifies a pass (access token): header typ `at+jwt`, ES256, known kid, signature, iss, type
 * `access`, exp, claim shapes, audience. Codes: invalid_token, token_expired, wrong_site,
 * invalid_request (bad options). Throws nothing but ProtocolError, except key-resolver errors.
 */
export async function verifyPass(token: unknown, o: VerifyPassOptions): Promise<PassClaims> {
  const aud = expectedAudience(o.site, o.url);
  const allowExpired = o.allowExpiredWithinSec;
  if (allowExpired !== undefined && !(allowExpired >= 0)) {
    throw new ProtocolError('invalid_request', 'allowExpiredWithinSec must be a non-negative number');
  }
  if (!isNonEmptyString(o.issuer) || !Number.isFinite(o.now)) {
    throw new ProtocolError('invalid_request', 'verifier misconfigured: issuer and now are required');
  }
  const resolver = toResolver(o.keys);
  const cache = allowExpired === undefined && typeof token === 'string' ? o.passCache : undefined;
  let claims = cache && typeof token === 'string' ? await cache.lookup(token, o.issuer, resolver, o.now) : undefined;
  if (claims === undefined) {
    const verified = await verifyServiceTokenWithKey(token, {
      keys: resolver,
      issuer: o.issuer,
      now: o.now,
      typ: PASS_TYP,
      type: 'access',
      checkExp: allowExpired === undefined,
    });
    claims = parsePassClaims(verified.payload, 'invalid_token');
    if (cache && typeof token === 'string') cache.remember(token, o.issuer, verified.kid, verified.key, claims);
  }
  if (allowExpired !== undefined && o.now - claims.iat > allowExpired) {
    throw new ProtocolError('token_expired', 'the access token is too old');
  }
  if (claims.aud !== aud) throw new ProtocolError('wrong_site');
  return claims;
}

export type VerifyPassAndProofInput = {
  accessToken: unknown;
  dpop: unknown;
  method: string;
  url: string;
  site?: string;
  now: number;
  keys: ServiceKeys;
  issuer: string;
  /** See VerifyPassOptions.passCache: the pass's signature is checked once per token, the proof on every call. */
  passCache?: VerifiedPassCache;
  /** Where the proof's signature is checked (es256.ts); on the thread pool when absent. */
  proofSignatureCheck?: SignatureCheck;
} & (SeparateSteps | CombinedStep);

/** Revocation, then the jti: a request refused as revoked leaves its proof unspent. */
type SeparateSteps = {
  /**
   * Records a DPoP jti; true if it was new, false if already seen (across all nodes). Called
   * last, only for an otherwise valid request. The key is the jti string itself.
   */
  consumeJti: (jti: string, expiresAtSec: number) => Promise<boolean>;
  /** Revocation hook: 'agent_revoked' / 'grant_revoked', or null when the pass may be used. */
  isRevoked?: (claims: PassClaims) => Promise<VerifyErrorCode | null>;
  checkAndConsume?: undefined;
  releaseJti?: undefined;
};

type CombinedStep = {
  /**
   * Revocation and jti in one step, for a store that answers both in one round trip (cloud verify).
   * Started for a request whose every other check passed, WHILE the proof's signature is checked
   * (verifyDpopProofWhile): the two waits overlap. The jti may then be spent although the pass is
   * refused as revoked; an agent makes a new proof for every request anyway, and the proof is bound
   * (`ath`) to the refused pass. Revocation is answered first, then replay.
   */
  checkAndConsume: (claims: PassClaims, jti: string, expiresAtSec: number) => Promise<{ verdict: VerifyErrorCode | null; fresh: boolean }>;
  /** Gives back a jti that `checkAndConsume` spent for a proof whose signature then did not verify. */
  releaseJti: (jti: string) => Promise<void>;
  consumeJti?: undefined;
  isRevoked?: undefined;
};

export type VerifiedRequest = { claims: PassClaims; proof: { jti: string; jkt: string } };

/**
 * THE check shared by cloud verify and the local verifier: pass, then proof bound to the pass
 * key, then revocation, then jti consumption. Consuming last means a request that fails any
 * other check does not burn its jti (the agent may retry with a corrected request); with
 * `checkAndConsume`, revocation and consumption are one step, run while the proof's signature is
 * checked (given back if the signature fails).
 */
export async function verifyPassAndProof(i: VerifyPassAndProofInput): Promise<VerifiedRequest> {
  if (!isNonEmptyString(i.method) || !isNonEmptyString(i.url)) {
    throw new ProtocolError('invalid_request', 'method and url are required');
  }
  const passOptions: VerifyPassOptions = { keys: i.keys, issuer: i.issuer, now: i.now, url: i.url };
  if (i.site !== undefined) passOptions.site = i.site;
  if (i.passCache !== undefined) passOptions.passCache = i.passCache;
  const claims = await verifyPass(i.accessToken, passOptions);
  if (typeof i.accessToken !== 'string') throw new ProtocolError('invalid_token'); // unreachable, narrows

  if (typeof i.dpop !== 'string' || i.dpop.length === 0) {
    throw new ProtocolError('invalid_dpop', 'the DPoP proof is missing');
  }
  const expectation: DpopExpectation = {
    method: i.method,
    url: i.url,
    accessToken: i.accessToken,
    now: i.now,
    jkt: claims.cnf.dpop,
    ...(i.proofSignatureCheck === undefined ? {} : { signatureCheck: i.proofSignatureCheck }),
  };
  // Retained past the whole ±120 s acceptance window of this proof.
  const jtiExpiresAt = Math.floor(i.now) + LIMITS.dpopJtiRetentionSec;
  if (i.checkAndConsume !== undefined) {
    const { checkAndConsume, releaseJti } = i;
    const { proof, spent } = await verifyDpopProofWhile(
      i.dpop,
      expectation,
      (jti) => checkAndConsume(claims, jti, jtiExpiresAt),
      async ({ fresh }, jti) => (fresh ? releaseJti(jti) : undefined),
    );
    if (spent.verdict !== null) throw new ProtocolError(spent.verdict);
    if (!spent.fresh) throw new ProtocolError('dpop_replay');
    return { claims, proof: { jti: proof.jti, jkt: proof.jkt } };
  }
  const proof = await verifyDpopProof(i.dpop, expectation);
  if (i.isRevoked !== undefined) {
    const verdict = await i.isRevoked(claims);
    if (verdict !== null) throw new ProtocolError(verdict);
  }
  const fresh = await i.consumeJti(proof.jti, jtiExpiresAt);
  if (!fresh) throw new ProtocolError('dpop_replay');
  return { claims, proof: { jti: proof.jti, jkt: proof.jkt } };
}
