import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { fromNodeRequest, refusalBody } from './node.ts';
import { type RouteOptions, checkRouteOptions, declaresJson, isRefused, requirementsFor } from './route-options.ts';
import type { Refused, Verified } from './types.ts';
import type { Verifier } from './verifier.ts';
import type { McpAnswer } from './mcp/guard.ts';
import type { McpAuth, McpNodeRequest } from './mcp/mcp-auth.ts';

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
export type { McpAuth };

/**
 * An MCP server's metadata for Fastify: registers GET (and HEAD) routes at `mandate.metadataPaths`.
 * `await app.register(mcpMetadata(mandate))`.
 */
export function mcpMetadata(mandate: McpAuth): FastifyPluginAsync {
  return async (app) => {
    for (const path of mandate.metadataPaths) {
      app.get(path, async (request, reply) => {
        const answer = mandate.metadataAnswer('GET', path);
        if (answer === undefined) return reply.code(404).send({ error: 'not_found' });
        return reply.code(answer.status).headers(answer.headers).send(JSON.stringify(answer.body));
      });
    }
  };
}

/**
 * A Fastify `preHandler` guarding an MCP endpoint (see `mcpAuth`): refusals are answered here; a
 * verified request goes on with `request.raw.auth` set as the MCP SDK expects, so the handler calls
 * `reply.hijack(); await transport.handleRequest(request.raw, reply.raw, request.body)`. The body is
 * Fastify's parsed JSON (its own limits and 400s apply).
 */
export function requireMcpAuth(mandate: McpAuth) {
  const send = (reply: FastifyReply, answer: McpAnswer) => reply.code(answer.status).headers(answer.headers).send(JSON.stringify(answer.body));
  return async function mcpAuthPreHandler(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    const authenticated = await mandate.authenticate(fromNodeRequest(request.raw, request.url));
    if (!authenticated.ok) return send(reply, authenticated.answer);
    if (request.method === 'POST') {
      const refused = mandate.authorize(authenticated.auth, request.body);
      if (refused !== undefined) return send(reply, refused);
    }
    (request.raw as McpNodeRequest).auth = authenticated.auth;
    return undefined;
  };
}
