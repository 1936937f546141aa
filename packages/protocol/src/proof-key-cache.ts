import { type KeyObject, createPublicKey } from 'node:crypto';
import { importJWK } from 'jose';
import type { CryptoKey } from 'jose';
import type { EcP256PublicJwk } from './jwk.ts';
import { jwkThumbprint, parsePublicP256Jwk } from './jwk.ts';

/**
 * `key` for jose, `keyObject` (the same key) for the DPoP signature check (es256.ts). The KeyObject is
 * made from the JWK, not from `key`: KeyObject.from of a non-extractable CryptoKey is deprecated (DEP0204).
 */
export type ProofKey = { jwk: EcP256PublicJwk; key: CryptoKey; keyObject: KeyObject; jkt: string };

/** Agents are few and send many proofs with the same key; remembering the last keys is enough. */
const MAX_ENTRIES = 1024;
const cache = new Map<string, ProofKey>();

/**
 * The DPoP header key, validated (parsePublicP256Jwk: public, P-256, on the curve), imported and
 * thumbprinted. Validation, import and thumbprint cost more than the signature check itself, so the
 * result is kept per (x, y): the same coordinates are the same key. Every other member of the
 * header jwk is still checked on each call by parsePublicP256Jwk's cheap shape rules.
 */
export async function proofKey(headerJwk: unknown): Promise<ProofKey> {
  const jwk = parsePublicP256Jwk(headerJwk, { skipCurveCheck: (x, y) => cache.has(`${x}.${y}`) });
  const id = `${jwk.x}.${jwk.y}`;
  const hit = cache.get(id);
  if (hit) {
    cache.delete(id); // most recently used last
    cache.set(id, hit);
    return hit;
  }
  const key = await importJWK(jwk, 'ES256');
  if (key instanceof Uint8Array) throw new TypeError('an EC key imports as a CryptoKey');
  const entry: ProofKey = { jwk, key, keyObject: createPublicKey({ key: jwk, format: 'jwk' }), jkt: await jwkThumbprint(jwk) };
  cache.set(id, entry);
  if (cache.size > MAX_ENTRIES) cache.delete(cache.keys().next().value as string);
  return entry;
}
