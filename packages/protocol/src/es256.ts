import { type KeyObject, verify as nodeVerify } from 'node:crypto';
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
 * Where an ES256 signature is checked:
 * - `thread-pool`: node:crypto's one-shot verify with a callback, on the libuv thread pool like
 *   WebCrypto (what jose uses). The event loop only hands it over (measured alone: 11.5 µs of event
 *   loop against 55 µs of CPU), so one process checks signatures on several cores. The default: a
 *   site's process (the site SDK's local mode) keeps its event loop for its own work.
 * - `inline`: the synchronous one-shot verify, on the calling thread: the least CPU per check, all
 *   of it on the event loop.
 * - a SignatureChecker: the caller's own, e.g. the service's signature thread, which takes a batch
 *   of checks per message (server/src/crypto/signature-worker.ts). A hand-over per signature (the
 *   thread pool) costs thread wake-ups and a return trip through the event loop; per batch it is
 *   shared (measured in bench/README.md).
 */
export type SignatureCheck = 'thread-pool' | 'inline' | SignatureChecker;

/**
 * A check done elsewhere: `signingInput` is the JWS's `header.payload`, `signature` its third
 * segment (base64url, 64 bytes once decoded), `key` the public key's coordinates. Resolves true when
 * the signature verifies; rejects only when it could not check (never for a bad signature).
 */
export type SignatureChecker = (signingInput: string, signature: string, key: { x: string; y: string }) => Promise<boolean>;

/**
 * The signature check of an ES256 compact JWS, for the one JWS verified on every request: the DPoP
 * proof. jose's compactVerify would parse and vet the header a second time; here the caller has
 * done that already (splitCompact: three base64url segments, a JSON object header with alg ES256)
 * and this function adds what jose would still check: no `crit` (no JWS extension is understood
 * here, RFC 7515 §4.1.11), exactly 64 signature bytes, a public P-256 key. Returns the payload
 * bytes, or null when the signature does not verify. A SignatureChecker is given `coordinates`, the
 * key's x and y as the caller holds them (the proof's header jwk).
 */
export async function verifyEs256Compact(token: string, header: JsonObject, keyObject: KeyObject, check: SignatureCheck = 'thread-pool', coordinates?: { x: string; y: string }): Promise<Uint8Array | null> {
  if (header['alg'] !== 'ES256' || header['crit'] !== undefined) return null;
  if (!isPublicP256(keyObject)) return null;
  const lastDot = token.lastIndexOf('.');
  const firstDot = token.indexOf('.');
  if (firstDot <= 0 || lastDot <= firstDot) return null;
  const signature = Buffer.from(token.slice(lastDot + 1), 'base64url');
  if (signature.length !== SIGNATURE_BYTES) return null;
  let ok: boolean;
  if (typeof check === 'function') {
    if (coordinates === undefined) throw new TypeError('a SignatureChecker needs the key coordinates');
    ok = await check(token.slice(0, lastDot), token.slice(lastDot + 1), coordinates);
  } else {
    const signingInput = Buffer.from(token.slice(0, lastDot), 'ascii');
    const publicKey = { key: keyObject, dsaEncoding: 'ieee-p1363' } as const;
    ok =
      check === 'inline'
        ? nodeVerify('sha256', signingInput, publicKey, signature)
        : await new Promise<boolean>((resolve, reject) => nodeVerify('sha256', signingInput, publicKey, signature, (err, valid) => (err ? reject(err) : resolve(valid))));
  }
  return ok ? Buffer.from(token.slice(firstDot + 1, lastDot), 'base64url') : null;
}
