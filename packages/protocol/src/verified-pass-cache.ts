import type { PassClaims } from './claims.ts';
import type { KeyResolver, VerificationKey } from './keys.ts';
import { isObject } from './shape.ts';

export type VerifiedPassCacheOptions = {
  /** Most passes remembered; the least recently used is dropped first. Default 10 000 (a pass is ~1 KB). */
  maxEntries?: number;
};

type Entry = { claims: Readonly<PassClaims>; issuer: string; kid: string; key: VerificationKey };

const DEFAULT_MAX_ENTRIES = 10_000;

/**
 * Passes whose signature was verified, keyed by the exact token string. A site sees the same pass on
 * every request of an agent session, so the pass's ES256 check (and its claim parsing) is done once
 * per token instead of once per request; the DPoP proof is still checked on every request.
 *
 * What a hit skips, and why that is safe: only the signature and shape checks, which depend on the
 * token bytes and the key alone. A hit counts only while the issuer is the same and the pass's `kid`
 * still resolves to the very key that verified it (so a key that leaves the published set, or a
 * resolver that now knows another key under that kid, makes the entry useless). Everything that
 * depends on the moment or the request runs on every call: `exp` against the caller's clock, the
 * audience, and in verifyPassAndProof the proof, revocation and jti steps.
 *
 * Only tokens that passed every check are stored, so nothing an attacker sends can enter the cache
 * unless the service signed it. Bounded: at most `maxEntries` passes; an expired pass is dropped
 * when it is next looked up, and in any case when it becomes the least recently used.
 *
 * One cache serves any number of verifiers; it is plain memory of one process, never shared.
 */
export class VerifiedPassCache {
  readonly maxEntries: number;
  private readonly entries = new Map<string, Entry>();

  constructor(options: VerifiedPassCacheOptions = {}) {
    const max = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
    if (!Number.isSafeInteger(max) || max < 1) throw new RangeError('maxEntries must be a positive integer');
    this.maxEntries = max;
  }

  /** Passes held now. */
  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
  }

  /**
   * The claims of a pass verified earlier with the key `resolver` still returns for its kid (a fresh
   * copy the caller may change), or undefined. Does not check `exp`: the caller does, on every call.
   */
  async lookup(token: string, issuer: string, resolver: KeyResolver, now: number): Promise<PassClaims | undefined> {
    const entry = this.entries.get(token);
    if (entry === undefined) return undefined;
    if (entry.issuer !== issuer || now >= entry.claims.exp) {
      this.entries.delete(token);
      return undefined;
    }
    const current = await resolver(entry.kid);
    if (current === undefined || !sameKey(current, entry.key)) {
      this.entries.delete(token);
      return undefined;
    }
    this.entries.delete(token); // most recently used last
    this.entries.set(token, entry);
    return copyClaims(entry.claims);
  }

  /** Stores a pass that passed every check, verified by `key` under `kid`. */
  remember(token: string, issuer: string, kid: string, key: VerificationKey, claims: PassClaims): void {
    this.entries.delete(token);
    this.entries.set(token, { claims: Object.freeze(copyClaims(claims)), issuer, kid, key });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done === true) break;
      this.entries.delete(oldest.value);
    }
  }
}

/** Claims are handed out as copies, so no caller can change what the next caller gets. */
function copyClaims(c: Readonly<PassClaims>): PassClaims {
  const copy: PassClaims = { ...c, scope: [...c.scope], cnf: { ...c.cnf } };
  if (c.user_info !== undefined) copy.user_info = { ...c.user_info };
  return copy;
}

/**
 * The same key object, or (for a resolver that builds its JWKs afresh on each call) a public JWK with
 * the same curve point. CryptoKey and KeyObject instances compare by identity only.
 */
function sameKey(a: VerificationKey, b: VerificationKey): boolean {
  if (a === b) return true;
  if (!isJwkLike(a) || !isJwkLike(b)) return false;
  return a['kty'] === b['kty'] && a['crv'] === b['crv'] && typeof a['x'] === 'string' && a['x'] === b['x'] && typeof a['y'] === 'string' && a['y'] === b['y'];
}

function isJwkLike(k: VerificationKey): k is VerificationKey & Record<string, unknown> {
  return isObject(k) && typeof (k as Record<string, unknown>)['kty'] === 'string';
}
