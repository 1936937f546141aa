import type { JSONWebKeySet } from 'jose';
import { type KeyResolver, type VerificationKey, keyResolverFromJwks } from '@mandate/protocol';
import type { VerifierConfig } from '../config.ts';
import { ServiceUnavailableError, callService, isRecord } from '../service-client.ts';

/**
 * Mandate's public keys (`GET /api/v1/jwks`), held in memory. A token naming a `kid` we do not
 * hold makes us fetch the set again (Mandate rotated its key), but at most once per
 * `jwksMinRefreshSec`: otherwise anyone could make us call Mandate on every request by sending
 * made-up kids. Only such unknown-kid fetches count toward that bound: the start-up and background
 * fetches do not, so a rotation shortly after start is picked up by the first pass that names the
 * new kid. Concurrent refreshes share one fetch.
 */
export class JwksCache {
  private resolver: KeyResolver | undefined;
  /** The held set's keys by kid, resolved once when loaded: the per-request lookup is a Map read, no await. */
  private byKid = new Map<string, VerificationKey>();
  private keyCount = 0;
  /** When the last fetch started (ms); failed fetches count too, so an outage is not hammered. */
  private lastAttemptAt = -Infinity;
  /** When the last fetch caused by an unknown kid started (ms): the bound of `resolve`. */
  private lastUnknownKidAttemptAt = -Infinity;
  private loadedAt = -Infinity;
  private inflight: Promise<void> | undefined;
  /** How many fetches were made (for status and tests). */
  fetches = 0;

  constructor(private readonly config: VerifierConfig) {}

  get loaded(): boolean {
    return this.resolver !== undefined;
  }

  get size(): number {
    return this.keyCount;
  }

  /** Age of the held key set in ms (Infinity when none). */
  ageMs(): number {
    return this.config.now() - this.loadedAt;
  }

  /** The protocol's key lookup over the held set, refreshing (bounded) on an unknown kid. */
  readonly resolve: KeyResolver = (kid) => {
    const held = this.byKid.get(kid);
    return held !== undefined ? Promise.resolve(held) : this.resolveUnknown(kid);
  };

  private async resolveUnknown(kid: string): Promise<VerificationKey | undefined> {
    const hit = await this.resolver?.(kid);
    if (hit !== undefined) return hit;
    if (this.inflight === undefined) {
      if (this.config.now() - this.lastUnknownKidAttemptAt < this.config.jwksMinRefreshSec * 1000) return undefined;
      this.lastUnknownKidAttemptAt = this.config.now();
    }
    await this.refresh();
    return this.resolver?.(kid);
  }

  /** True when the bound allows another fetch now (any fetch, failed ones included, counts). */
  mayRefresh(): boolean {
    return this.config.now() - this.lastAttemptAt >= this.config.jwksMinRefreshSec * 1000;
  }

  /** Fetches the key set now (joining a fetch in flight). Throws ServiceUnavailableError on failure; the held set stays. */
  refresh(): Promise<void> {
    this.inflight ??= this.load().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  private async load(): Promise<void> {
    this.lastAttemptAt = this.config.now();
    this.fetches++;
    const res = await callService(this.config, '/api/v1/jwks', { method: 'GET' });
    if (res.status !== 200) throw new ServiceUnavailableError(`GET /api/v1/jwks answered ${res.status}`);
    const keys = isRecord(res.body) ? res.body['keys'] : undefined;
    if (!Array.isArray(keys)) throw new ServiceUnavailableError('GET /api/v1/jwks: the answer has no keys list');
    const resolver = keyResolverFromJwks(res.body as JSONWebKeySet);
    const byKid = new Map<string, VerificationKey>();
    for (const k of keys) {
      const kid: unknown = isRecord(k) ? k['kid'] : undefined;
      if (typeof kid !== 'string' || byKid.has(kid)) continue;
      const key = await resolver(kid);
      if (key !== undefined) byKid.set(kid, key);
    }
    this.resolver = resolver;
    this.byKid = byKid;
    this.keyCount = keys.length;
    this.loadedAt = this.config.now();
  }
}
