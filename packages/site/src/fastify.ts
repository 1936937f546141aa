import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { fromNodeRequest, refusalBody } from './node.ts';
import { type RouteOptions, checkRouteOptions, declaresJson, isRefused, requirementsFor } from './route-options.ts';
import type { Refused, Verified } from './types.ts';
import type { Verifier } from './verifier.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by requireAgent on a verified agent request; null elsewhere. */
    mandate: Verified | null;
  }
}

async function decorate(app: Parameters<FastifyPluginAsync>[0]): Promise<void> {
  if (!app.hasRequestDecorator('mandate')) app.decorateRequest('mandate', null);
}

/**
 * Declares `request.mandate` on every request (Fastify prefers declared request properties). Not
 * encapsulated (like fastify-plugin), so registering it once at the root covers every route.
 */
export const mandatePlugin: FastifyPluginAsync = Object.assign(decorate, { [Symbol.for('skip-override')]: true });

/**
 * `action` and `summary` may read the request, e.g. `(request) => \`pay order ${(request.params as { id: string }).id}\``;
 * `bindBody` reads `request.body` as Fastify parsed it (JSON content types only).
 */
export type FastifyRouteOptions = RouteOptions<FastifyRequest>;

/**
 * A Fastify `preHandler`: the route runs only for a verified agent request that meets its needs,
 * with the result in `request.mandate`; otherwise the refusal is answered (`{"error": ...}` with
 * 401, 403 or 503). On sensitive routes, run your lookup first (an earlier preHandler or
 * preValidation hook): a step-up is used up when accepted.
 */
export function requireAgent(verifier: Verifier, options: FastifyRouteOptions = {}) {
  checkRouteOptions(options);
  // Fastify's rule for an early answer from an async hook: send, then return the reply.
  const refuse = (reply: FastifyReply, r: Refused) => reply.code(r.status).header('cache-control', 'no-store').send(refusalBody(r));
  return async function mandatePreHandler(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    const body = options.bindBody === true && declaresJson(request.headers) && request.body !== undefined ? { json: request.body } : undefined;
    const route = requirementsFor(options, request, body);
    if (isRefused(route)) return refuse(reply, route);
    const result = await verifier.verify(fromNodeRequest(request.raw, request.url), route);
    if (!result.ok) return refuse(reply, result);
    request.mandate = result;
    return undefined;
  };
}

export type { Verified } from './types.ts';
