import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { fromNodeRequest, refusalBody } from './node.ts';
import { type RouteOptions, checkRouteOptions, declaresJson, isRefused, requirementsFor } from './route-options.ts';
import type { Refused, Verified } from './types.ts';
import type { Verifier } from './verifier.ts';
import type { McpAnswer, McpAuthInfo } from './mcp/guard.ts';
import type { McpAuth } from './mcp/mcp-auth.ts';
import { readJsonBodyOrWhy } from './node-body.ts';

declare global {
  // Express declares its request type in this global namespace.
  namespace Express {
    interface Request {
      /** Set by requireAgent on a verified agent request. */
      mandate?: Verified;
    }
  }
}

/** `bindBody` reads `req.body` as parsed by `express.json()` (which must run before requireAgent). */
export type ExpressRouteOptions = RouteOptions<Request>;

/**
 * Express middleware: lets a request through only when it is a verified agent request that meets
 * the route's needs, with the result in `req.mandate`; otherwise answers the refusal
 * (`{"error": ...}` with 401, 403 or 503). On sensitive routes, put your lookup middleware first:
 * a step-up is used up when accepted. The URL is rebuilt from `req.originalUrl`, so the middleware
 * also works inside routers.
 */
export function requireAgent(verifier: Verifier, options: ExpressRouteOptions = {}): RequestHandler {
  checkRouteOptions(options);
  const refuse = (res: Response, r: Refused) => void res.status(r.status).set('cache-control', 'no-store').json(refusalBody(r));
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      // Express 5 leaves req.body undefined when no body parser took the request.
      const body = options.bindBody === true && declaresJson(req.headers) && req.body !== undefined ? { json: req.body as unknown } : undefined;
      const route = requirementsFor(options, req, body);
      if (isRefused(route)) return refuse(res, route);
      const result = await verifier.verify(fromNodeRequest(req, req.originalUrl), route);
      if (!result.ok) return refuse(res, result);
      req.mandate = result;
      next();
    } catch (e) {
      next(e);
    }
  };
}

export type { Verified } from './types.ts';
export type { McpAuth, McpAuthInfo };

/** An MCP server's metadata for Express: answers GETs of `mandate.metadataPaths`, passes every other request on. */
export function mcpMetadata(mandate: McpAuth): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const answer = mandate.metadataAnswer(req.method, req.originalUrl);
    if (answer === undefined) return next();
    res.status(answer.status).set(answer.headers);
    if (req.method === 'HEAD') return void res.end();
    res.send(JSON.stringify(answer.body));
  };
}

/** A body some other parser left: text or bytes are parsed as JSON here; anything else is taken as parsed. */
function parsedAlready(body: unknown): { json: unknown } | { error: 'not_json' } {
  if (typeof body !== 'string' && !Buffer.isBuffer(body)) return { json: body };
  try {
    return { json: JSON.parse(body.toString()) as unknown };
  } catch {
    return { error: 'not_json' };
  }
}

/**
 * Express middleware guarding an MCP endpoint (see `mcpAuth`): refusals are answered here (401 with
 * the challenge, 403 `insufficient_scope`, 400, 413, 503); a verified request goes on with `req.auth`
 * set as the MCP SDK expects and, for a POST, `req.body` parsed (by `express.json()` if it ran before,
 * else read here, up to 1 MiB), so the route calls `transport.handleRequest(req, res, req.body)`.
 */
export function requireMcpAuth(mandate: McpAuth): RequestHandler {
  const send = (res: Response, answer: McpAnswer) => void res.status(answer.status).set(answer.headers).send(JSON.stringify(answer.body));
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const authenticated = await mandate.authenticate(fromNodeRequest(req, req.originalUrl));
      if (!authenticated.ok) return send(res, authenticated.answer);
      if (req.method === 'POST') {
        // Express 5 leaves req.body undefined when no body parser took the request: the stream is still unread.
        const read = req.body === undefined ? await readJsonBodyOrWhy(req) : parsedAlready(req.body as unknown);
        if (!('json' in read)) return send(res, mandate.badBody(read.error));
        req.body = read.json;
        const refused = mandate.authorize(authenticated.auth, read.json);
        if (refused !== undefined) return send(res, refused);
      }
      (req as Request & { auth?: McpAuthInfo }).auth = authenticated.auth;
      next();
    } catch (e) {
      next(e);
    }
  };
}
