import { KeyObject, verify as nodeVerify } from 'node:crypto';
import type { CryptoKey } from 'jose';
import type { JsonObject } from './shape.ts';

/** An ES256 signature is r || s, 32 bytes each (RFC 7518 §3.4). */
const SIGNATURE_BYTES = 64;

/** Keys already seen to be public P-256 keys (reading a KeyObject's curve is a native call). */
const p256Keys = new WeakSet<KeyObject>();

function isPublicP256(key: KeyObject): boolean {
  if (p256Keys.has(key)) return true;
  const ok = key.type === 'public' && key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1';
  if (ok) p256Keys.add(key);
  return ok;
}

/**
 * The signature check of an ES256 compact JWS, for the one JWS verified on every request: the DPoP
 * proof. It runs on node:crypto's synchronous one-shot verify: the least CPU per check. Handing the
 * check to the libuv thread pool (node:crypto with a callback, or WebCrypto, which jose uses) costs a
 * thread wake-up and a return trip through the event loop per signature, which on a busy machine cost
 * more CPU than it saves on the event loop (measured: bench/README.md, "Fast path"). jose's
 * compactVerify would parse and vet the header a second time; here the caller has done that already
 * (splitCompact: three base64url segments, a JSON object header with alg ES256) and this function
 * adds what jose would still check: no `crit` (no JWS extension is understood here, RFC 7515
 * §4.1.11), exactly 64 signature bytes, a public P-256 key. Returns the payload bytes, or null when
 * the signature does not verify.
 */
export function verifyEs256Compact(token: string, header: JsonObject, key: KeyObject | CryptoKey): Uint8Array | null {
  if (header['alg'] !== 'ES256' || header['crit'] !== undefined) return null;
  const keyObject = key instanceof KeyObject ? key : KeyObject.from(key);
  if (!isPublicP256(keyObject)) return null;
  const lastDot = token.lastIndexOf('.');
  const firstDot = token.indexOf('.');
  if (firstDot <= 0 || lastDot <= firstDot) return null;
  const signature = Buffer.from(token.slice(lastDot + 1), 'base64url');
  if (signature.length !== SIGNATURE_BYTES) return null;
  const signingInput = Buffer.from(token.slice(0, lastDot), 'ascii');
  const ok = nodeVerify('sha256', signingInput, { key: keyObject, dsaEncoding: 'ieee-p1363' }, signature);
  return ok ? Buffer.from(token.slice(firstDot + 1, lastDot), 'base64url') : null;
}
