import type { CryptoKey } from 'jose';
import type { JsonObject } from './shape.ts';

const ECDSA_P256_SHA256 = { name: 'ECDSA', hash: 'SHA-256' } as const;
/** An ES256 signature is r || s, 32 bytes each (RFC 7518 §3.4). */
const SIGNATURE_BYTES = 64;

/**
 * The signature check of an ES256 compact JWS, straight on WebCrypto (the primitive jose uses too),
 * for the one JWS verified on every request: the DPoP proof. jose's compactVerify would parse and
 * vet the header a second time; here the caller has done that already (splitCompact: three
 * base64url segments, a JSON object header with alg ES256) and this function adds what jose would
 * still check: no `crit` (no JWS extension is understood here, RFC 7515 §4.1.11), exactly 64
 * signature bytes. Returns the payload bytes, or null when the signature does not verify.
 */
export async function verifyEs256Compact(token: string, header: JsonObject, key: CryptoKey): Promise<Uint8Array | null> {
  if (header['alg'] !== 'ES256' || header['crit'] !== undefined) return null;
  if (key.type !== 'public' || key.algorithm.name !== 'ECDSA' || (key.algorithm as { namedCurve?: unknown }).namedCurve !== 'P-256') return null;
  const lastDot = token.lastIndexOf('.');
  const firstDot = token.indexOf('.');
  if (firstDot <= 0 || lastDot <= firstDot) return null;
  const signature = Buffer.from(token.slice(lastDot + 1), 'base64url');
  if (signature.length !== SIGNATURE_BYTES) return null;
  const signingInput = Buffer.from(token.slice(0, lastDot), 'ascii');
  const ok = await globalThis.crypto.subtle.verify(ECDSA_P256_SHA256, key, signature, signingInput);
  return ok ? Buffer.from(token.slice(firstDot + 1, lastDot), 'base64url') : null;
}
