import { createPublicKey } from 'node:crypto';
import { calculateJwkThumbprint } from 'jose';
import type { JWK } from 'jose';
import { isObject } from './shape.ts';

/** The only key an agent may hold: a public EC P-256 key, nothing else. */
export type EcP256PublicJwk = { kty: 'EC'; crv: 'P-256'; x: string; y: string };

/** Thrown by parsePublicP256Jwk; callers map it to their own error (invalid_dpop, 400 ...). */
export class JwkError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JwkError';
  }
}

// 32 bytes in unpadded base64url are exactly 43 characters.
const COORDINATE = /^[A-Za-z0-9_-]{43}$/;

function isCanonicalCoordinate(value: unknown): value is string {
  if (typeof value !== 'string' || !COORDINATE.test(value)) return false;
  const bytes = Buffer.from(value, 'base64url');
  // Re-encoding catches non-zero padding bits: the same point spelled differently would give
  // a different RFC 7638 thumbprint, i.e. a second identity for one key.
  return bytes.length === 32 && bytes.toString('base64url') === value;
}

/**
 * Validates an untrusted JWK (a DPoP header `jwk`, an agent key sent at registration) and
 * returns a fresh object holding only the four public members. Refuses private keys (`d`),
 * other key types and curves, malformed coordinates and points that are not on the curve.
 */
export function parsePublicP256Jwk(
  value: unknown,
  opts: { skipCurveCheck?: (x: string, y: string) => boolean } = {},
): EcP256PublicJwk {
  if (!isObject(value)) throw new JwkError('the key must be a JWK object');
  if ('d' in value) throw new JwkError('the key contains private parts (d); send only the public key');
  if (value['kty'] !== 'EC') throw new JwkError('the key must have kty EC');
  if (value['crv'] !== 'P-256') throw new JwkError('the key must be on curve P-256');
  if (value['alg'] !== undefined && value['alg'] !== 'ES256') throw new JwkError('the key alg must be ES256');
  if (value['use'] !== undefined && value['use'] !== 'sig') throw new JwkError('the key use must be sig');
  const x = value['x'];
  const y = value['y'];
  if (!isCanonicalCoordinate(x) || !isCanonicalCoordinate(y)) {
    throw new JwkError('the key coordinates x and y must be base64url of 32 bytes');
  }
  const jwk: EcP256PublicJwk = { kty: 'EC', crv: 'P-256', x, y };
  // A caller that already validated these exact coordinates (a cache of checked keys) may skip the
  // costly curve check; every shape rule above has still run.
  if (opts.skipCurveCheck?.(x, y)) return jwk;
  try {
    // OpenSSL refuses a point that is not on the curve (invalid-curve attacks).
    createPublicKey({ key: jwk, format: 'jwk' });
  } catch {
    throw new JwkError('the key is not a valid point on P-256');
  }
  return jwk;
}

/** RFC 7638 JWK thumbprint, SHA-256, base64url: the value of `cnf.dpop` / `cnf.jkt`. */
export function jwkThumbprint(jwk: JWK | EcP256PublicJwk): Promise<string> {
  return calculateJwkThumbprint(jwk, 'sha256');
}
