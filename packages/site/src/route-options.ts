import { detailsDigestOf } from '@mandate/protocol';
import { header } from './request.ts';
import { refuse } from './results.ts';
import type { HeaderSource, Refused, RouteRequirements } from './types.ts';
import { checkScope } from './verifier.ts';

/**
 * A protected route's needs as the middleware take them (node:http, Express, Fastify); the action
 * and the summary may depend on the request.
 */
export type RouteOptions<Req> = {
  /** The scope the pass must carry. */
  scope?: string;
  /** The exact text the owner approves in a step-up, e.g. `(req) => \`pay order ${req.params.id}\``. */
  action?: string | ((req: Req) => string);
  /**
   * Binds the step-up to the request's JSON body (decisions §28, §29): the step-up must have been
   * approved with `details.digest` equal to base64url SHA-256 of the body's RFC 8785 canonical JSON,
   * else 403 `stepup_wrong_details`. The request must send `Content-Type: application/json` (or a
   * `+json` type) and a JSON body, else 400 `invalid_request`. Needs `action`.
   */
  bindBody?: boolean;
  /**
   * What the owner should read on the approval card (1 to 500 printable characters), sent beside
   * `action` in the `stepup_required` answer; the agent asks its owner with it. Needs `action`.
   */
  summary?: string | ((req: Req) => string);
};

/** Throws for options no request could satisfy: a bug of the site, found when the route is declared. */
export function checkRouteOptions<Req>(o: RouteOptions<Req>): void {
  checkScope(o.scope);
  if (o.action === undefined && o.bindBody === true) throw new TypeError('bindBody binds a step-up to the body: the route needs an action');
  if (o.action === undefined && o.summary !== undefined) throw new TypeError('summary is shown with a step-up: the route needs an action');
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/** Whether the request declares a JSON body (`application/json`, `application/<x>+json`). */
export function declaresJson(headers: HeaderSource): boolean {
  const type = header(headers, 'content-type');
  return type.kind === 'one' && JSON_TYPE.test(type.value);
}

/** A JSON body as the framework parsed it, or `undefined` when the request has none (or not JSON). */
export type ParsedBody = { json: unknown } | undefined;

const NOT_JSON = 'this route binds its step-up to the JSON body: send Content-Type: application/json and a JSON body';

/**
 * The requirements of one request: the route's action and summary for it, and with `bindBody` the
 * digest of its JSON body. A throwing action or summary function is a bug of the site and propagates.
 */
export function requirementsFor<Req>(o: RouteOptions<Req>, req: Req, body: ParsedBody): RouteRequirements | Refused {
  const r: RouteRequirements = {};
  if (o.scope !== undefined) r.scope = o.scope;
  // The body first: the site's action and summary functions may read it.
  if (o.bindBody === true) {
    if (body === undefined) return refuse(400, 'invalid_request', NOT_JSON);
    try {
      r.detailsDigest = detailsDigestOf(body.json);
    } catch {
      return refuse(400, 'invalid_request', NOT_JSON); // a value a JSON parser cannot have produced
    }
  }
  const action = typeof o.action === 'function' ? o.action(req) : o.action;
  if (action === undefined) return r;
  r.action = action;
  const summary = typeof o.summary === 'function' ? o.summary(req) : o.summary;
  if (summary !== undefined) r.summary = summary;
  return r;
}

/** True for a refusal, false for requirements. */
export function isRefused(r: RouteRequirements | Refused): r is Refused {
  return 'ok' in r;
}
