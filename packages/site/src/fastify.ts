import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { actionFor, fromNodeRequest, refusalBody } from './node.ts';
import type { Verified } from './types.ts';
import type { Verifier } from './verifier.ts';
import { checkScope } from './verifier.ts';

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

/** `action` may read the request, e.g. `(request) => \`pay order ${(request.params as { id: string }).id}\``. */
export type FastifyRouteOptions = { scope?: string; action?: string | ((request: FastifyRequest) => string) };

/**
 * A Fastify `preHandler`: the route runs only for a verified agent request that meets its needs,
 * with the result in `request.mandate`; otherwise the refusal is answered (`{"error": ...}` with
 * 401, 403 or 503). On sensitive routes, run your lookup first (an earlier preHandler or
 * preValidation hook): a step-up is used up when accepted.
 */
export function requireAgent(verifier: Verifier, options: FastifyRouteOptions = {}) {
  checkScope(options.scope);
  return async function mandatePreHandler(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    const action = actionFor(options.action, request);
    const result = await verifier.verify(fromNodeRequest(request.raw, request.url), {
      ...(options.scope === undefined ? {} : { scope: options.scope }),
      ...(action === undefined ? {} : { action }),
    });
    // Fastify's rule for an early answer from an async hook: send, then return the reply.
    if (!result.ok) return reply.code(result.status).header('cache-control', 'no-store').send(refusalBody(result));
    request.mandate = result;
    return undefined;
  };
}

export type { Verified } from './types.ts';
