import type { VerifyErrorCode } from '@mandate/protocol';

/** Header values as node:http delivers them (lower-case names), or a Fetch API `Headers`. */
export type HeaderSource = Record<string, string | string[] | undefined> | Headers;

/**
 * One incoming request, framework-free. Every adapter (node:http, Express, Fastify) builds this;
 * other frameworks build it by hand.
 */
export type MandateRequest = {
  /** The HTTP method, e.g. `GET`. */
  method: string;
  /** Path and query exactly as received (`req.url` in node:http, `req.originalUrl` in Express). */
  url: string;
  headers: HeaderSource;
  /** True when this process terminated TLS itself; only used when no `publicBaseUrl` is set. */
  secure?: boolean;
};

/** What a route needs. Both are optional; without either, any valid pass for your site is accepted. */
export type RouteRequirements = {
  /** The scope the pass must carry, e.g. `orders:read`; missing: 403 `insufficient_scope`. */
  scope?: string;
  /**
   * A sensitive action: the exact text the owner approved in a step-up (`buy 1 x Desk lamp for 19.90 EUR`).
   * The request must carry `X-Service-Stepup` for it; missing: 403 `stepup_required`, but only for a
   * valid pass that has the route's `scope` (the others get 401 or 403 `insufficient_scope` first).
   */
  action?: string;
  /**
   * With `action`: the step-up must have been approved for exactly these details, i.e. carry this
   * `details_digest` (base64url SHA-256 of the RFC 8785 canonical JSON of what is approved, usually
   * the request's JSON body: `detailsDigestOf(body)`); otherwise 403 `stepup_wrong_details`.
   */
  detailsDigest?: string;
  /** With `action`: the text the site suggests the owner reads (1 to 500 printable characters), sent in the `stepup_required` answer. */
  summary?: string;
};

/** A verified agent request: who is acting, for whom, with which rights. */
export type Verified = {
  ok: true;
  agentId: string;
  /** The agent's display name: cloud mode only (a pass carries no name, so local mode cannot know it). */
  agentName?: string;
  /** The person the agent acts for: their stable id, the same at every site. */
  userId: string;
  site: string;
  scopes: string[];
  /** Approved fields (`user:name`, `user:email`, `user:phone`) -> value; `{}` when none. */
  userInfo: Record<string, string>;
  /** True when the route declared an action and a valid one-time step-up for it was used up. */
  stepup: boolean;
};

/** Codes the SDK adds to the verify codes of the protocol (decisions §7). */
export const SDK_ERROR_CODES = ['insufficient_scope', 'stepup_required', 'service_unavailable', 'revocation_stale'] as const;
export type SdkErrorCode = (typeof SDK_ERROR_CODES)[number];
export type MandateErrorCode = VerifyErrorCode | SdkErrorCode;

/** A refused request, ready to be answered as the site rules say: `status` with `{"error": error}`. */
export type Refused = {
  ok: false;
  /**
   * 401: verification failed (the `error` says why); 403: `insufficient_scope`, `stepup_required`, or
   * `stepup_wrong_details` (the step-up was approved for other details); 400: the route's action or
   * summary for this request is not valid, or a route bound to its body got no JSON body; 503: no verdict could be had
   * (`service_unavailable`, `revocation_stale`): refused, try again later.
   */
  status: 400 | 401 | 403 | 503;
  error: MandateErrorCode;
  /** For people (logs, agent developers); may change. Never contains token bytes. */
  description: string;
  /** With `stepup_required`: the exact action text the agent must have its owner approve. */
  action?: string;
  /** With `stepup_required`: the route's suggested text for the owner's approval card, when it has one. */
  summary?: string;
};

export type VerifyResult = Verified | Refused;

export type Mode = 'cloud' | 'local';
