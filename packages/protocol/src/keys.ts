import { KeyObject as NodeKeyObject } from 'node:crypto';
import type { CryptoKey, JSONWebKeySet, JWK, KeyObject } from 'jose';
import { parsePublicP256Jwk } from './jwk.ts';
import { proofKey } from './proof-key-cache.ts';
import { isObject } from './shape.ts';

/** A service verification key as a resolver may hand it back. */
export type VerificationKey = CryptoKey | KeyObject | JWK;

/**
 * Looks up a service signing key by the token's `kid`; `undefined` when unknown.
 * The server passes one backed by its key table; a local verifier passes the published JWKS
 * (`GET /api/v1/jwks`) instead, see ServiceKeys. Errors thrown by a resolver (database down ...)
 * are not token verdicts and propagate unchanged. The kid handed to a resolver is always a
 * string of 1..MAX_KID_LENGTH characters.
 */
export type KeyResolver = (kid: string) => Promise<VerificationKey | undefined>;

/** Either a resolver or a JWKS document; in a JWKS only public EC P-256 (ES256) keys count. */
export type ServiceKeys = KeyResolver | JSONWebKeySet;

/** Longer kids are refused before any lookup (no 10 KB strings into a key store). */
export const MAX_KID_LENGTH = 256;

/** Builds a resolver over a JWKS, ignoring members that cannot be ES256 verification keys. */
export function keyResolverFromJwks(jwks: JSONWebKeySet): KeyResolver {
  const byKid = new Map<string, JWK>();
  const list: unknown = isObject(jwks) ? jwks['keys'] : undefined;
  for (const k of Array.isArray(list) ? list : []) {
    if (!isObject(k) || typeof k['kid'] !== 'string' || byKid.has(k['kid'])) continue;
    if (k['alg'] !== undefined && k['alg'] !== 'ES256') continue;
    try {
      byKid.set(k['kid'], parsePublicP256Jwk(k));
    } catch {
      // not a usable public P-256 key: a token naming it gets "unknown kid"
    }
  }
  return async (kid) => byKid.get(kid);
}

export function toResolver(keys: ServiceKeys): KeyResolver {
  return typeof keys === 'function' ? keys : keyResolverFromJwks(keys);
}

/**
 * Turns a resolved key into something jose verifies with. A JWK is reduced to its public
 * members, so a resolver that happens to return a private JWK still verifies and never signs.
 */
export async function toVerifyKey(key: VerificationKey): Promise<CryptoKey | KeyObject> {
  if (!isJwk(key)) return key;
  const { d: _private, ...publicPart } = key;
  // Validating and importing a JWK costs more than the signature check; the import is remembered per
  // curve point (proof-key-cache.ts), so a resolver that hands out JWKs, or an agent whose stored key
  // is read afresh for every request, pays it once.
  return (await proofKey(publicPart)).key;
}

/** CryptoKey and KeyObject instances have no own `kty`; a JWK always has one. */
function isJwk(key: VerificationKey): key is JWK {
  return !(key instanceof NodeKeyObject) && isObject(key) && typeof key['kty'] === 'string';
}
