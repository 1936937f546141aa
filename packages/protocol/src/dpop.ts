import { createHash } from 'node:crypto';
import type { DpopClaims } from './claims.ts';
import { DPOP_TYP } from './claims.ts';
import { ProtocolError } from './errors.ts';
import { htuIs, normalizeHtu } from './htu.ts';
import { type CompactParts, decodeJsonBytes, decodeJsonSegment, splitCompact } from './jws.ts';
import { type SignatureCheck, verifyEs256Compact } from './es256.ts';
import type { EcP256PublicJwk } from './jwk.ts';
import { type ProofKey, proofKey } from './proof-key-cache.ts';
import { LIMITS } from './limits.ts';
import { Memo } from './memo.ts';
import { type JsonObject, isInt, isNonEmptyString } from './shape.ts';

/** A proof carries a public key and five short claims; anything much larger is not a proof. */
const MAX_PROOF_LENGTH = 8 * 1024;

/** A site sends the same pass with every request of an agent session: its hash is kept. */
const tokenHashes = new Memo<string>(256);

/** RFC 9449 §4.2 `ath`: base64url SHA-256 of the ASCII access token. */
export function accessTokenHash(token: string): string {
  return tokenHashes.get(token) ?? tokenHashes.set(token, createHash('sha256').update(token, 'utf8').digest('base64url'));
}

export type VerifiedDpopSignature = {
  claims: DpopClaims;
  jwk: EcP256PublicJwk;
  /** RFC 7638 thumbprint of `jwk`. */
  jkt: string;
};

function invalid(why: string): ProtocolError {
  return new ProtocolError('invalid_dpop', `the DPoP proof ${why}`);
}

/** 8 to 128 characters (code points, as the limit is stated), none a control character: a jti is stored as text. */
function jtiOk(jti: string): boolean {
  const n = [...jti].length;
  return n >= LIMITS.dpopJtiMinLength && n <= LIMITS.dpopJtiMaxLength && !/[\u0000-\u001f\u007f]/.test(jti);
}

/** A proof's header vetted (typ, alg, a public P-256 `jwk`), before its signature is checked. */
type ProofHeader = { parts: CompactParts; key: ProofKey };

/**
 * An agent's proofs all have the same header (typ, alg, its key): the headers vetted last are kept by
 * their exact text, which skips decoding it and validating its key on every request. Only headers
 * that passed every check are kept.
 */
const vettedHeaders = new Memo<ProofHeader>(1024);

async function proofHeader(proof: unknown): Promise<ProofHeader & { proof: string }> {
  const headerText = typeof proof === 'string' ? proof.slice(0, proof.indexOf('.')) : '';
  const vetted = vettedHeaders.get(headerText);
  const parts = splitCompact(proof, MAX_PROOF_LENGTH, vetted?.parts.header);
  if (parts === null || typeof proof !== 'string') throw invalid('is not a well-formed JWS');
  if (vetted !== undefined) return { proof, ...vetted };
  const { typ, alg, jwk: headerJwk } = parts.header;
  if (typ !== DPOP_TYP) throw invalid(`header typ must be ${DPOP_TYP}`);
  // Checked before jose sees the token: none, HS256 (public key as HMAC secret), RS256, ES384 ...
  // never reach a verifier.
  if (alg !== 'ES256') throw invalid('alg must be ES256');
  let key: ProofKey;
  try {
    key = await proofKey(headerJwk);
  } catch (e) {
    throw invalid(`header jwk is refused: ${e instanceof Error ? e.message : 'invalid key'}`);
  }
  return { proof, ...vettedHeaders.set(headerText, { parts, key }) };
}

/**
 * The proof's signature: its payload bytes, or null when it does not verify. node:crypto refusing
 * what it was given is a bad signature; a checker of the caller's that fails (its thread stopped)
 * has said nothing about the proof and must not be taken for a verdict: its error is thrown.
 */
async function signedPayload(h: ProofHeader & { proof: string }, check: SignatureCheck): Promise<Uint8Array | null> {
  try {
    return await verifyEs256Compact(h.proof, h.parts.header, h.key.keyObject, check, h.key.jwk);
  } catch (e) {
    if (typeof check === 'function') throw e;
    return null;
  }
}

/** The claims a proof must carry, well typed (htm, htu, iat, jti; ath when present). */
function proofClaims(p: JsonObject | null): DpopClaims {
  if (p === null) throw invalid('payload is not a JSON object');
  // jose's JWT claim checks are not used: a proof has no exp, and iat is judged by the caller's clock.
  const { htm, htu, iat, jti, ath } = p;
  if (!isNonEmptyString(htm)) throw invalid('has no htm');
  if (!isNonEmptyString(htu)) throw invalid('has no htu');
  if (!isInt(iat)) throw invalid('has no integer iat');
  if (typeof jti !== 'string' || !jtiOk(jti)) {
    throw invalid(`jti must be ${LIMITS.dpopJtiMinLength} to ${LIMITS.dpopJtiMaxLength} characters, without control characters`);
  }
  if (ath !== undefined && typeof ath !== 'string') throw invalid('ath must be a string');
  const claims: DpopClaims = { htm, htu, iat, jti };
  if (ath !== undefined) claims.ath = ath;
  return claims;
}

/**
 * First half of proof verification, with no request context: header typ `dpop+jwt`, alg ES256
 * only, header `jwk` a public P-256 key, signature by that key, and well-typed htm / htu / iat /
 * jti (and ath when present). Exported because RFC 9449 token-request proofs (no `ath`) stop
 * here; access to a resource must go through verifyDpopProof. Throws ProtocolError('invalid_dpop').
 */
export async function verifyDpopSignature(proof: unknown, check: SignatureCheck = 'thread-pool'): Promise<VerifiedDpopSignature> {
  const header = await proofHeader(proof);
  const payloadBytes = await signedPayload(header, check);
  if (payloadBytes === null) throw invalid('signature is invalid');
  return { claims: proofClaims(decodeJsonBytes(payloadBytes)), jwk: header.key.jwk, jkt: header.key.jkt };
}

export type DpopExpectation = {
  /** The request method; compared with htm after upper-casing. */
  method: string;
  /** The full request URL as the site sees it (its public address plus path). */
  url: string;
  /** The pass presented with the proof; the proof's ath must hash it. */
  accessToken: string;
  /** Unix seconds. */
  now: number;
  /** The thumbprint the pass is bound to (cnf.dpop); checked when given. */
  jkt?: string;
  /** Where the proof's signature is checked (es256.ts); on the thread pool when absent. */
  signatureCheck?: SignatureCheck;
};

export type VerifiedDpopProof = { jti: string; iat: number; jkt: string; jwk: EcP256PublicJwk };

/** The caller's own inputs, vetted; the URL the proof's htu must name. */
function expectedHtu(expect: DpopExpectation): ReturnType<typeof normalizeHtu> {
  if (!isNonEmptyString(expect.method)) throw new ProtocolError('invalid_request', 'the request method is missing');
  if (!isNonEmptyString(expect.accessToken)) throw new ProtocolError('invalid_request', 'the access token is missing');
  if (!Number.isFinite(expect.now)) throw new ProtocolError('invalid_request', 'verifier clock is missing');
  if (expect.jkt !== undefined && !isNonEmptyString(expect.jkt)) {
    throw new ProtocolError('invalid_request', 'the expected key thumbprint is malformed');
  }
  return normalizeHtu(expect.url); // a bad request URL is the caller's error, whatever the proof says
}

/** The proof against this request: key, access token, method, URL and time. */
function checkAgainstRequest(claims: DpopClaims, jkt: string, expect: DpopExpectation, htu: ReturnType<typeof normalizeHtu>): void {
  if (claims.ath === undefined) throw invalid('has no ath (required with an access token)');
  if (expect.jkt !== undefined && jkt !== expect.jkt) {
    throw new ProtocolError('dpop_key_mismatch');
  }
  if (claims.ath !== accessTokenHash(expect.accessToken)) throw invalid('ath does not match the access token');
  if (claims.htm !== expect.method.toUpperCase()) throw new ProtocolError('dpop_method_mismatch');
  if (!htuIs(claims.htu, htu)) throw new ProtocolError('dpop_url_mismatch');
  if (Math.abs(expect.now - claims.iat) > LIMITS.dpopIatToleranceSec) throw new ProtocolError('dpop_stale');
}

/**
 * Verifies a DPoP proof for one request (decisions.md §4). Error codes:
 * - invalid_request: the caller's own inputs (method, url, accessToken, now) are unusable;
 * - invalid_dpop: malformed, bad header or signature, missing/ill-typed claims, and also an
 *   `ath` that does not hash this access token (the proof was made for another token; the key
 *   may well be right, so this is not a key mismatch);
 * - dpop_key_mismatch: signed by a key whose thumbprint is not `expect.jkt`;
 * - dpop_method_mismatch, dpop_url_mismatch, dpop_stale (iat more than 120 s off).
 *
 * It does NOT check replay: the caller must consume the returned `jti` in a shared store, keyed
 * by the jti string (never by proof bytes: ECDSA signatures are malleable, see the high-S
 * vector), and only after every other check passed.
 */
export async function verifyDpopProof(proof: unknown, expect: DpopExpectation): Promise<VerifiedDpopProof> {
  const htu = expectedHtu(expect);
  const { claims, jwk, jkt } = await verifyDpopSignature(proof, expect.signatureCheck);
  checkAgainstRequest(claims, jkt, expect, htu);
  return { jti: claims.jti, iat: claims.iat, jkt, jwk };
}

/**
 * verifyDpopProof, with `spend` (the jti's consumption, and whatever goes with it) run WHILE the
 * signature is checked instead of after: the two waits overlap (cloud verify: the signature thread
 * and the database), which is what bounds throughput with a few dozen requests in flight. The
 * answers are those of verifyDpopProof in the same order:
 * - every check but the signature runs first, on the payload as sent; a proof failing one of them
 *   is judged by its signature first (`signature is invalid` when it does not verify), and `spend`
 *   never runs;
 * - otherwise `spend(jti)` starts; when the signature then does not verify, what `spend` took is
 *   given back (`giveBack`) before `invalid_dpop` is thrown, so a refused proof uses up nothing.
 *   A failure to give it back leaves the jti spent (the verdict stands either way: it only concerns
 *   a proof that was refused).
 * `spend`'s own error is thrown only for a proof whose signature verified.
 */
export async function verifyDpopProofWhile<T>(
  proof: unknown,
  expect: DpopExpectation,
  spend: (jti: string) => Promise<T>,
  giveBack: (spent: T, jti: string) => Promise<void>,
): Promise<{ proof: VerifiedDpopProof; spent: T }> {
  const htu = expectedHtu(expect);
  const header = await proofHeader(proof);
  const signed = signedPayload(header, expect.signatureCheck ?? 'thread-pool').then((bytes) => bytes !== null);
  const { jwk, jkt } = header.key;
  let claims: DpopClaims;
  try {
    // The payload as sent: the same bytes the signature covers (signedPayload decodes this segment).
    claims = proofClaims(decodeJsonSegment(header.proof.slice(header.proof.indexOf('.') + 1, header.proof.lastIndexOf('.'))));
    checkAgainstRequest(claims, jkt, expect, htu);
  } catch (e) {
    if (!(await signed)) throw invalid('signature is invalid');
    throw e;
  }
  const spending = spend(claims.jti).then((value) => ({ ok: true as const, value }), (error: unknown) => ({ ok: false as const, error }));
  let verified: boolean;
  try {
    verified = await signed;
  } catch (e) {
    await giveBackIfSpent(spending, giveBack, claims.jti);
    throw e;
  }
  if (!verified) {
    await giveBackIfSpent(spending, giveBack, claims.jti);
    throw invalid('signature is invalid');
  }
  const outcome = await spending;
  if (!outcome.ok) throw outcome.error;
  return { proof: { jti: claims.jti, iat: claims.iat, jkt, jwk }, spent: outcome.value };
}

async function giveBackIfSpent<T>(spending: Promise<{ ok: true; value: T } | { ok: false; error: unknown }>, giveBack: (spent: T, jti: string) => Promise<void>, jti: string): Promise<void> {
  const outcome = await spending;
  if (!outcome.ok) return;
  try {
    await giveBack(outcome.value, jti);
  } catch {
    // The jti stays spent; the proof is refused either way.
  }
}
