import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { fromNodeRequest, refusalBody } from './node.ts';
import { type RouteOptions, checkRouteOptions, declaresJson, isRefused, requirementsFor } from './route-options.ts';
import type { Refused, Verified } from './types.ts';
import type { Verifier } from './verifier.ts';

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
