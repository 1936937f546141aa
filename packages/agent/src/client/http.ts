import type { Clock } from '../clock.ts';
import { systemClock } from '../clock.ts';
import { AgentRevokedError, MandateError, ServiceUnreachableError, isRevokedDetail } from './errors.ts';
import { parseHttpUrl } from '../http-url.ts';

export type FetchLike = (input: string | URL, init?: RequestInit) => Promise<Response>;

export type ServiceClientOptions = {
  /** Base URL of the Mandate service, e.g. `https://mandate.example`. */
  serviceUrl: string;
  fetch?: FetchLike;
  clock?: Clock;
  /** Per-request timeout (default 30 s). */
  timeoutMs?: number;
  /** How many times a 429 is waited out before it is reported (default 3). */
  maxRateLimitRetries?: number;
  /** A Retry-After longer than this is not waited out but reported (default 60 s). */
  maxRetryAfterSec?: number;
};

export type CallOptions = {
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal | undefined;
};

type Json = Record<string, unknown>;

/** The service URL without trailing slashes; only http(s) URLs are accepted. */
export function normalizeServiceUrl(url: string): string {
  const parsed = parseHttpUrl(url, 'the service URL must be http or https', (message) => new TypeError(message));
  if (parsed.username || parsed.password) throw new TypeError('the service URL must not contain credentials');
  return `${parsed.origin}${parsed.pathname}`.replace(/\/+$/, '');
}

/** Turns the service's error body into one line: a string `detail`, or a 422's list of problems. */
export function detailText(body: unknown, status: number): string {
  const detail = (body as Json | null)?.['detail'];
  if (typeof detail === 'string' && detail) return detail;
  if (Array.isArray(detail)) {
    const items = detail.map((d: unknown) => {
      const item = d as { loc?: unknown; msg?: unknown };
      const loc = Array.isArray(item.loc) ? item.loc.join('.') : '';
      return `${loc ? `${loc}: ` : ''}${typeof item.msg === 'string' ? item.msg : JSON.stringify(d)}`;
    });
    if (items.length) return items.join('; ');
  }
  return `HTTP ${status} without a detail`;
}

/** The error an error answer maps to: `AgentRevokedError` for a revoked agent, else `MandateError`. */
export function errorFromAnswer(status: number, body: unknown, retryAfterHeader: string | null, method: string, path: string): MandateError {
  const detail = detailText(body, status);
  const nextStep = (body as Json | null)?.['next_step'];
  const retryAfter = parseRetryAfter(retryAfterHeader, body);
  const init = { status, detail, nextStep: typeof nextStep === 'string' ? nextStep : undefined, retryAfter, method, path };
  return isRevokedDetail(status, detail) ? new AgentRevokedError(init) : new MandateError('service_error', init);
}

function parseRetryAfter(header: string | null, body: unknown): number | undefined {
  const fromHeader = header === null ? NaN : Number(header);
  if (Number.isFinite(fromHeader) && fromHeader >= 0) return fromHeader;
  const fromBody = (body as Json | null)?.['retry_after'];
  return typeof fromBody === 'number' && fromBody >= 0 ? fromBody : undefined;
}

/**
 * JSON over HTTP to the Mandate service. Every non-2xx answer becomes a `MandateError` carrying the
 * service's `detail` and `next_step`; no answer at all becomes `ServiceUnreachableError`. A 429 is
 * waited out as `Retry-After` says, a few times, then reported.
 */
export class ServiceClient {
  readonly serviceUrl: string;
  private readonly fetchImpl: FetchLike;
  private readonly clock: Clock;
  private readonly timeoutMs: number;
  private readonly maxRateLimitRetries: number;
  private readonly maxRetryAfterSec: number;

  constructor(opts: ServiceClientOptions) {
    this.serviceUrl = normalizeServiceUrl(opts.serviceUrl);
    this.fetchImpl = opts.fetch ?? ((input, init) => fetch(input, init));
    this.clock = opts.clock ?? systemClock;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.maxRateLimitRetries = opts.maxRateLimitRetries ?? 3;
    this.maxRetryAfterSec = opts.maxRetryAfterSec ?? 60;
  }

  async call<T>(method: string, path: string, opts: CallOptions = {}): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const res = await this.send(method, path, opts);
      const body = await readJson(res, method, path);
      if (res.ok) return body as T;
      const error = errorFromAnswer(res.status, body, res.headers.get('retry-after'), method, path);
      const wait = error.retryAfter ?? 5;
      if (res.status === 429 && attempt < this.maxRateLimitRetries && wait <= this.maxRetryAfterSec) {
        await this.clock.sleep(wait * 1000, opts.signal);
        continue;
      }
      throw error;
    }
  }

  private async send(method: string, path: string, opts: CallOptions): Promise<Response> {
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
    const headers: Record<string, string> = { accept: 'application/json', ...opts.headers };
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    try {
      return await this.fetchImpl(this.serviceUrl + path, {
        method,
        headers,
        body: opts.body === undefined ? null : JSON.stringify(opts.body),
        signal,
        redirect: 'error', // a redirect would carry our agent JWT elsewhere
      });
    } catch (e) {
      // The caller's own abort is theirs to handle, not a network failure.
      if (opts.signal?.aborted) throw opts.signal.reason;
      const why = timeout.aborted ? `no answer within ${this.timeoutMs / 1000} s` : describeNetworkError(e);
      throw new ServiceUnreachableError({ detail: `cannot reach the Mandate service at ${this.serviceUrl}: ${why}`, method, path, cause: e, nextStep: 'check the service URL and the network, then retry' });
    }
  }
}

async function readJson(res: Response, method: string, path: string): Promise<unknown> {
  const text = await res.text();
  if (!text) return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    const excerpt = text.slice(0, 200);
    // A success that is not JSON is not the service we know (a captive portal, a wrong URL).
    if (res.ok) throw new MandateError('service_error', { status: res.status, detail: `the answer is not JSON: ${excerpt}`, method, path, nextStep: 'check the service URL' });
    // Not JSON (a proxy's error page): keep a short excerpt as the detail, so nothing is hidden.
    return { detail: `HTTP ${res.status}: ${excerpt}` };
  }
}

function describeNetworkError(e: unknown): string {
  // fetch says only "fetch failed"; the reason (ECONNREFUSED, ENOTFOUND, "bad port") is its cause.
  const cause = (e as { cause?: { code?: string; message?: string } })?.cause;
  return cause?.code ?? cause?.message ?? (e instanceof Error ? e.message : String(e));
}
