import type { ReplayCacheOption } from './local/replay-cache.ts';
import type { Mode } from './types.ts';

export type RevocationMode = 'stream' | 'poll';

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

/** Options of `createVerifier`. Only `mode`, `serviceUrl` and `site` are required. */
export type VerifierOptions = {
  /** `cloud`: one call to Mandate per request. `local`: checks signatures here, calls Mandate only for step-ups. */
  mode: Mode;
  /** Where this site reaches Mandate, e.g. `https://mandate.example`. */
  serviceUrl: string;
  /** Your site id: the host name agents ask access for (`shop.example`, `localhost:3000`). */
  site: string;
  /**
   * How agents reach you, e.g. `https://shop.example` (a path prefix is kept). The URL each DPoP proof
   * signs is this plus the request path. Strongly recommended: without it the URL is built from the
   * Host header (and, with `trustForwardedHeaders`, X-Forwarded-Host / -Proto).
   */
  publicBaseUrl?: string;
  /** Trust X-Forwarded-Host and X-Forwarded-Proto; only behind your own proxy, and only without `publicBaseUrl`. Default false. */
  trustForwardedHeaders?: boolean;
  /** Local mode: the `iss` of passes, i.e. Mandate's BASE_URL exactly. Default: `serviceUrl` without a trailing slash. */
  issuer?: string;
  /**
   * Local mode: how revocations reach this verifier. `stream` (the default): follow Mandate's event
   * stream, so a revocation is refused within a second; while the stream is down (or where Mandate does
   * not offer it) the list is polled every `revTtlSec`. `poll`: only poll.
   */
  revocation?: RevocationMode;
  /** Local mode: poll the revocation list this often (with `revocation: 'stream'`: only while the stream is down). Default 60 s. */
  revTtlSec?: number;
  /** Local mode: refuse requests (503 `revocation_stale`) once the held list was signed longer ago than this. Default 5 x revTtlSec. */
  maxStaleSec?: number;
  /** Local mode: fetch the keys again for an unknown `kid` at most this often. Default 10 s. */
  jwksMinRefreshSec?: number;
  /**
   * Local mode: where DPoP proof ids are remembered. Default: in memory (one process only), 100 000
   * proofs. Either a cache of your own (shared by several processes), or the in-memory one's budget:
   * `{ maxEntries, maxEntriesPerAgent }` (see MemoryReplayCache). A bad value throws here.
   */
  replayCache?: ReplayCacheOption;
  /** Timeout of each call to Mandate. Default 5000 ms. */
  timeoutMs?: number;
  /** Default: global fetch. */
  fetch?: FetchLike;
  /** Clock in epoch milliseconds. Default Date.now. */
  now?: () => number;
  /** Told about failures that cost a verdict (Mandate unreachable, a rejected revocation list). Default: console.warn. Never given token bytes. */
  onError?: (error: Error) => void;
};

export type VerifierConfig = {
  mode: Mode;
  serviceUrl: string;
  site: string;
  publicBaseUrl: string | undefined;
  trustForwardedHeaders: boolean;
  issuer: string;
  revocation: RevocationMode;
  revTtlSec: number;
  maxStaleSec: number;
  jwksMinRefreshSec: number;
  timeoutMs: number;
  fetch: FetchLike;
  now: () => number;
  onError: (error: Error) => void;
};

function httpUrl(name: string, value: unknown): string {
  if (typeof value !== 'string' || value === '') throw new TypeError(`${name} is required`);
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new TypeError(`${name} is not a URL: ${value}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new TypeError(`${name} must be an http or https URL`);
  if (parsed.search !== '' || parsed.hash !== '' || parsed.username !== '' || parsed.password !== '') {
    throw new TypeError(`${name} must not carry a query, fragment or credentials`);
  }
  return value.replace(/\/+$/, '');
}

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) throw new TypeError(`${name} must be a positive number`);
  return value;
}

/** Validates the options once, at start-up: a misconfigured verifier throws here, not per request. */
export function parseOptions(o: VerifierOptions): VerifierConfig {
  if (o.mode !== 'cloud' && o.mode !== 'local') throw new TypeError(`mode must be 'cloud' or 'local'`);
  if (typeof o.site !== 'string' || !/^[^\s/?#@]+$/.test(o.site)) throw new TypeError('site must be your host name, e.g. shop.example');
  const serviceUrl = httpUrl('serviceUrl', o.serviceUrl);
  const revTtlSec = positive('revTtlSec', o.revTtlSec, 60);
  const maxStaleSec = positive('maxStaleSec', o.maxStaleSec, 5 * revTtlSec);
  if (maxStaleSec < revTtlSec) throw new TypeError('maxStaleSec must be at least revTtlSec');
  if (o.revocation !== undefined && o.revocation !== 'stream' && o.revocation !== 'poll') throw new TypeError(`revocation must be 'stream' or 'poll'`);
  const fetchImpl = o.fetch ?? globalThis.fetch;
  if (typeof fetchImpl !== 'function') throw new TypeError('no fetch available: pass options.fetch');
  return {
    mode: o.mode,
    serviceUrl,
    site: o.site.toLowerCase(), // Mandate compares site ids in lower case
    publicBaseUrl: o.publicBaseUrl === undefined || o.publicBaseUrl === '' ? undefined : httpUrl('publicBaseUrl', o.publicBaseUrl),
    trustForwardedHeaders: o.trustForwardedHeaders === true,
    issuer: o.issuer === undefined ? serviceUrl : httpUrl('issuer', o.issuer),
    revocation: o.revocation ?? 'stream',
    revTtlSec,
    maxStaleSec,
    jwksMinRefreshSec: positive('jwksMinRefreshSec', o.jwksMinRefreshSec, 10),
    timeoutMs: positive('timeoutMs', o.timeoutMs, 5000),
    fetch: fetchImpl,
    now: o.now ?? Date.now,
    onError: o.onError ?? ((e) => console.warn(`[mandate] ${e.message}`)),
  };
}
