/**
 * Client ID Metadata Documents (decisions §28): a `client_id` that is a URL is fetched through the
 * outbound guard (§24: https:, public addresses, no redirects, 5 s) and must be a JSON object naming
 * itself, with `client_name` and `redirect_uris`, for a public client. Accepted documents are kept
 * in memory on this node for as long as their `Cache-Control: max-age` says, clamped to 60 s - 24 h
 * (300 s when it says nothing; `no-store`/`no-cache` count as 0, so 60 s).
 *
 * Fetches are limited so that nobody can use this service to hammer a site, and so that nobody can
 * lock a site's real clients out by exhausting the limit with made-up client_id URLs on its host:
 * - a refusal is kept 60 s per URL (asking again within it fetches nothing and answers the same);
 * - a URL whose document was accepted before on this node (its copy may have expired) is fetched
 *   under a limit of its own (per URL), never the host's: made-up URLs cannot use up its fetches;
 * - any other URL counts per host AND caller address (IPv4 address or IPv6 /64), and per host
 *   across callers under a higher cap that bounds what the site receives.
 */
import type { Clock } from '../../clock.ts';
import { OutboundError, type OutboundFetch, type OutboundPolicy } from '../../outbound/types.ts';
import type { RateLimiter } from '../rate-limit.ts';
import { isMetadataProblem, readPublicClientMetadata } from './client-metadata.ts';
import type { KnownClient } from './known-client.ts';
import { metadataUrlProblem } from './metadata-document-url.ts';
import { OAuthError, invalidClient } from './oauth-error.ts';
import { clientKeys } from '../client-address.ts';

/** Well above the 5 kB the draft suggests: real documents (claude.ai's) have been larger than 5 kB. */
export const METADATA_DOCUMENT_MAX_BYTES = 32 * 1024;
export const CACHE_MIN_SEC = 60;
export const CACHE_MAX_SEC = 24 * 3600;
export const CACHE_DEFAULT_SEC = 300;
/** Documents kept per node; the oldest goes first. */
export const CACHE_MAX_ENTRIES = 1000;
/** Fetches of new documents on one host per caller address per minute, across nodes. */
export const FETCHES_PER_HOST_PER_MINUTE = 30;
/** Fetches of new documents on one host per minute from all callers together, across nodes. */
export const FETCHES_PER_HOST_ALL_CALLERS_PER_MINUTE = 300;
/** Re-fetches of one document accepted before (its copy expired) per minute. */
export const REFETCHES_PER_URL_PER_MINUTE = 10;
/** How long a refusal is kept per URL. */
export const REFUSAL_KEPT_SEC = 60;

export interface MetadataDocumentsDeps {
  clock: Clock;
  limiter: RateLimiter;
  /** The outbound guard (guardedFetch) built with `policy`. */
  fetch: OutboundFetch;
  policy: OutboundPolicy;
}

/** Seconds to keep a document, from its Cache-Control, clamped. */
export function cacheSeconds(cacheControl: string | undefined): number {
  if (cacheControl === undefined) return CACHE_DEFAULT_SEC;
  const directives = cacheControl.toLowerCase().split(',').map((d) => d.trim());
  if (directives.some((d) => d === 'no-store' || d === 'no-cache')) return CACHE_MIN_SEC;
  const maxAge = directives.map((d) => /^max-age="?(\d{1,12})"?$/.exec(d)?.[1]).find((v) => v !== undefined);
  if (maxAge === undefined) return CACHE_DEFAULT_SEC;
  return Math.min(Math.max(Number(maxAge), CACHE_MIN_SEC), CACHE_MAX_SEC);
}

const refused = (url: string, why: string) => invalidClient(`the client metadata document at ${url} ${why}`);

export class MetadataDocuments {
  /** Accepted documents; an expired entry stays (until pushed out) as the mark of a URL known good. */
  private readonly cache = new Map<string, { client: KnownClient; until: number }>();
  private readonly refusals = new Map<string, { error: OAuthError; until: number }>();
  /** One fetch per URL at a time: concurrent requests for the same client wait for it. */
  private readonly inFlight = new Map<string, Promise<KnownClient>>();

  constructor(private readonly deps: MetadataDocumentsDeps) {}

  /**
   * The client the document at `url` describes; `invalid_client` (an OAuthError) when it cannot be
   * used. `caller`: the address of the request that names it (null when not known), for the limits.
   */
  async client(url: string, caller: string | null = null): Promise<KnownClient> {
    const now = this.deps.clock.now();
    const cached = this.cache.get(url);
    if (cached && cached.until > now) return cached.client;
    const refused = this.refusals.get(url);
    if (refused && refused.until > now) throw refused.error;
    const running = this.inFlight.get(url);
    if (running) return running;
    const fetching = this.fetchAndKeep(url, caller).finally(() => this.inFlight.delete(url));
    this.inFlight.set(url, fetching);
    return fetching;
  }

  private async fetchAndKeep(url: string, caller: string | null): Promise<KnownClient> {
    try {
      return await this.fetchAndRead(url, caller);
    } catch (e) {
      // Kept: asking again within the minute fetches nothing. A rate limit is not a refusal of the document.
      if (e instanceof OAuthError) this.remember(this.refusals, url, { error: e, until: this.deps.clock.now() + REFUSAL_KEPT_SEC * 1000 });
      throw e;
    }
  }

  /** The limits of the doc comment: known-good URLs per URL; others per host and caller, and per host. */
  private async limit(url: string, caller: string | null): Promise<void> {
    if (this.cache.has(url)) return this.deps.limiter.check(`oidc-cimd-url:${url}`, REFETCHES_PER_URL_PER_MINUTE, 60);
    const host = new URL(url).host;
    await this.deps.limiter.check(`oidc-cimd:${host}:${caller === null ? '-' : clientKeys(caller).address}`, FETCHES_PER_HOST_PER_MINUTE, 60);
    await this.deps.limiter.check(`oidc-cimd:${host}`, FETCHES_PER_HOST_ALL_CALLERS_PER_MINUTE, 60);
  }

  private async fetchAndRead(url: string, caller: string | null): Promise<KnownClient> {
    const problem = metadataUrlProblem(url, this.deps.policy);
    if (problem !== null) throw invalidClient(problem);
    await this.limit(url, caller);
    let response;
    try {
      response = await this.deps.fetch(url, { method: 'GET', headers: { accept: 'application/json' } });
    } catch (error) {
      if (!(error instanceof OutboundError)) throw error;
      throw refused(url, `could not be fetched: ${error.message}`);
    }
    if (response.status >= 300 && response.status < 400) throw refused(url, `answered ${response.status}, a redirect; redirects are not followed`);
    if (response.status !== 200) throw refused(url, `answered ${response.status}; it must answer 200 with the JSON document`);
    if (response.body.length > METADATA_DOCUMENT_MAX_BYTES) throw refused(url, `is ${response.body.length} bytes; at most ${METADATA_DOCUMENT_MAX_BYTES}`);
    let doc: unknown;
    try {
      doc = JSON.parse(response.body.toString('utf8'));
    } catch {
      throw refused(url, 'is not JSON');
    }
    const client = this.read(url, doc);
    this.keep(url, client, cacheSeconds(response.headers['cache-control']));
    return client;
  }

  private read(url: string, doc: unknown): KnownClient {
    const named = typeof doc === 'object' && doc !== null ? (doc as Record<string, unknown>)['client_id'] : undefined;
    if (named !== url) throw refused(url, 'must hold "client_id" equal to its own URL, exactly');
    const secretHeld = ['client_secret', 'client_secret_expires_at'].some((k) => k in (doc as Record<string, unknown>));
    if (secretHeld) throw refused(url, 'must not hold a client_secret: it describes a public client');
    const metadata = readPublicClientMetadata(doc, null);
    if (isMetadataProblem(metadata)) throw refused(url, `is not usable: ${metadata.problem}`);
    return { id: url, kind: 'metadata_document', isPublic: true, verifiedOrigins: [], ...metadata };
  }

  private keep(url: string, client: KnownClient, seconds: number): void {
    this.refusals.delete(url);
    this.remember(this.cache, url, { client, until: this.deps.clock.now() + seconds * 1000 });
  }

  /** Sets `url` in a bounded map: the oldest entry goes first. */
  private remember<T>(map: Map<string, T>, url: string, value: T): void {
    map.delete(url);
    if (map.size >= CACHE_MAX_ENTRIES) {
      const oldest = map.keys().next();
      if (oldest.done !== true) map.delete(oldest.value);
    }
    map.set(url, value);
  }
}
