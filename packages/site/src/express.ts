import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { actionFor, fromNodeRequest, refusalBody } from './node.ts';
import type { Verified } from './types.ts';
import type { Verifier } from './verifier.ts';
import { checkScope } from './verifier.ts';

declare global {
  // Express declares its request type in this global namespace.
  namespace Express {
    interface Request {
      /** Set by requireAgent on a verified agent request. */
      mandate?: Verified;
    }
  }
}

export type ExpressRouteOptions = { scope?: string; action?: string | ((req: Request) => string) };

/**
 * Express middleware: lets a request through only when it is a verified agent request that meets
 * the route's needs, with the result in `req.mandate`; otherwise answers the refusal
 * (`{"error": ...}` with 401, 403 or 503). On sensitive routes, put your lookup middleware first:
 * a step-up is used up when accepted. The URL is rebuilt from `req.originalUrl`, so the middleware
 * also works inside routers.
 */
export function requireAgent(verifier: Verifier, options: ExpressRouteOptions = {}): RequestHandler {
  checkScope(options.scope);
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const action = actionFor(options.action, req);
      const result = await verifier.verify(fromNodeRequest(req, req.originalUrl), {
        ...(options.scope === undefined ? {} : { scope: options.scope }),
        ...(action === undefined ? {} : { action }),
      });
      if (!result.ok) {
        res.status(result.status).set('cache-control', 'no-store').json(refusalBody(result));
        return;
      }
      req.mandate = result;
      next();
    } catch (e) {
      next(e);
    }
  };
}

export type { Verified } from './types.ts';
