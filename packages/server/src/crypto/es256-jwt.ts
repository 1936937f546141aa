import { createPublicKey, sign as nodeSign, verify as nodeVerify, type JsonWebKey, type KeyObject } from 'node:crypto';

/**
 * ES256 JWTs signed and checked with node:crypto's one-shot functions on KeyObjects, for the two
 * signatures of every pass issuance (the agent JWT checked, the pass signed). Through jose
 * (WebCrypto) the same work cost 200-245 µs per check and about 150 µs per signature here, against
 * 90 and 30 µs (measured on the development machine; bench/README.md, "Pass issuance"); importing
 * the agent's JWK on every call cost another 200 µs.
 */

/** An ES256 signature is r || s, 32 bytes each (RFC 7518 §3.4). */
const SIGNATURE_BYTES = 64;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Agents' public keys by their exact JWK members (kty, crv, x, y); bounded, least recently used dropped. */
const MAX_PUBLIC_KEYS = 10_000;
const publicKeys = new Map<string, KeyObject>();

/**
 * The KeyObject of a public P-256 JWK, imported once per distinct key: the cache is keyed by every
 * member that makes the key (kty, crv, x, y), so a changed key is a new entry, never an old one; a
 * removed or revoked agent is refused before its key is looked at (domain/agents/agent-jwt.ts).
 * createPublicKey checks that the point is on the curve.
 */
export function publicKeyOf(jwk: { kty: string; crv: string; x: string; y: string }): KeyObject {
  const id = `${jwk.kty}\u0000${jwk.crv}\u0000${jwk.x}\u0000${jwk.y}`;
  const hit = publicKeys.get(id);
  if (hit !== undefined) {
    publicKeys.delete(id); // most recently used last
    publicKeys.set(id, hit);
    return hit;
  }
  const key = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y } as JsonWebKey, format: 'jwk' });
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') throw new TypeError('not a P-256 public key');
  publicKeys.set(id, key);
  if (publicKeys.size > MAX_PUBLIC_KEYS) publicKeys.delete(publicKeys.keys().next().value as string);
  return key;
}

/** Why a JWT was refused; `code` as jose names the same failures (ERR_JWT_EXPIRED: exp passed). */
export class JwtRefused extends Error {
  constructor(readonly code: 'ERR_JWT_EXPIRED' | 'ERR_JWS_INVALID' | 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' | 'ERR_JWT_CLAIM_VALIDATION_FAILED' | 'ERR_JWT_INVALID', message: string) {
    super(message);
  }
}

/**
 * Checks an ES256 compact JWT as jose's `jwtVerify(token, key, { algorithms: ['ES256'],
 * currentDate: now, requiredClaims: ['iat', 'exp'] })` does, and answers its claims:
 * - three segments; a JSON object header with `alg` ES256 and no `crit` (no extension is understood);
 * - the signature (64 bytes, r || s) by `key` over `header.payload`;
 * - a JSON object payload; `iat` and `exp` numbers, `exp` after `now`; `nbf`, when present, a number
 *   not after `now`. Times are seconds, no leeway.
 * Throws JwtRefused otherwise.
 */
export function verifyEs256Jwt(token: string, key: KeyObject, now: number): Record<string, unknown> {
  const firstDot = token.indexOf('.');
  const lastDot = token.lastIndexOf('.');
  if (firstDot <= 0 || lastDot <= firstDot || token.indexOf('.', firstDot + 1) !== lastDot) throw new JwtRefused('ERR_JWS_INVALID', 'not a compact JWS');
  const header = jsonObject(token.slice(0, firstDot));
  if (header === undefined) throw new JwtRefused('ERR_JWS_INVALID', 'the header is not a JSON object');
  if (header['alg'] !== 'ES256') throw new JwtRefused('ERR_JWS_INVALID', 'alg must be ES256');
  if (header['crit'] !== undefined) throw new JwtRefused('ERR_JWS_INVALID', 'no JWS extension (crit) is understood');
  const signature = Buffer.from(token.slice(lastDot + 1), 'base64url');
  if (signature.length !== SIGNATURE_BYTES || !isBase64url(token, lastDot + 1, token.length)) throw new JwtRefused('ERR_JWS_SIGNATURE_VERIFICATION_FAILED', 'signature verification failed');
  const ok = nodeVerify('sha256', Buffer.from(token.slice(0, lastDot), 'latin1'), { key, dsaEncoding: 'ieee-p1363' }, signature);
  if (!ok) throw new JwtRefused('ERR_JWS_SIGNATURE_VERIFICATION_FAILED', 'signature verification failed');
  const payload = jsonObject(token.slice(firstDot + 1, lastDot));
  if (payload === undefined) throw new JwtRefused('ERR_JWT_INVALID', 'the payload is not a JSON object');
  for (const claim of ['iat', 'exp'] as const) {
    if (!(claim in payload)) throw new JwtRefused('ERR_JWT_CLAIM_VALIDATION_FAILED', `missing required "${claim}" claim`);
    if (typeof payload[claim] !== 'number') throw new JwtRefused('ERR_JWT_CLAIM_VALIDATION_FAILED', `"${claim}" claim must be a number`);
  }
  if ('nbf' in payload && payload['nbf'] !== undefined) {
    if (typeof payload['nbf'] !== 'number') throw new JwtRefused('ERR_JWT_CLAIM_VALIDATION_FAILED', '"nbf" claim must be a number');
    if (payload['nbf'] > now) throw new JwtRefused('ERR_JWT_CLAIM_VALIDATION_FAILED', '"nbf" claim timestamp check failed');
  }
  if ((payload['exp'] as number) <= now) throw new JwtRefused('ERR_JWT_EXPIRED', '"exp" claim timestamp check failed');
  return payload;
}

/**
 * A compact ES256 JWS of `payload` (JSON) with the protected header `{ alg, kid, typ }`, as jose's
 * SignJWT writes it: the same bytes up to the signature, which ECDSA draws afresh each time.
 */
export function signEs256Jwt(privateKey: KeyObject, header: { kid: string; typ: string }, payload: object): string {
  const input = `${encode({ alg: 'ES256', kid: header.kid, typ: header.typ })}.${encode(payload)}`;
  const signature = nodeSign('sha256', Buffer.from(input, 'latin1'), { key: privateKey, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}

const encode = (value: object): string => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');

const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** Node's base64url decoder skips characters outside the alphabet; jose refuses them. */
function isBase64url(s: string, from: number, to: number): boolean {
  return BASE64URL.test(s.slice(from, to));
}

function jsonObject(segment: string): Record<string, unknown> | undefined {
  if (!BASE64URL.test(segment)) return undefined;
  try {
    const value: unknown = JSON.parse(utf8.decode(Buffer.from(segment, 'base64url')));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
