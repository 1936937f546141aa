import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { Verifier } from './verifier.ts';
import { checkScope } from './verifier.ts';
import type { MandateRequest, Refused, Verified } from './types.ts';

/** The framework-free request of a node:http request (`url` may be given, e.g. Express's `originalUrl`). */
export function fromNodeRequest(req: IncomingMessage, url: string = req.url ?? ''): MandateRequest {
  return { method: req.method ?? '', url, headers: req.headers, secure: (req.socket as Partial<TLSSocket> | undefined)?.encrypted === true };
}

/** The JSON body of a refusal: `{"error": code, "error_description": text}`, plus `action` with stepup_required. */
export function refusalBody(r: Refused): { error: string; error_description: string; action?: string } {
  return { error: r.error, error_description: r.description, ...(r.action === undefined ? {} : { action: r.action }) };
}

/** Answers a refusal as the site rules say (status and `{"error": ...}`). */
export function sendRefusal(res: ServerResponse, r: Refused): void {
  if (res.headersSent) return;
  res.writeHead(r.status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' }).end(JSON.stringify(refusalBody(r)));
}

/** A route's needs; `action` may depend on the request (`(req) => \`pay order ${id}\``). */
export type NodeRouteOptions<Req> = { scope?: string; action?: string | ((req: Req) => string) };

/** Resolves a route's action for one request; a throwing action function is a bug of the site and propagates. */
export function actionFor<Req>(action: NodeRouteOptions<Req>['action'], req: Req): string | undefined {
  return typeof action === 'function' ? action(req) : action;
}

export type WithMandate<Req extends IncomingMessage = IncomingMessage> = Req & { mandate: Verified };

/**
 * node:http: wraps a handler so that it runs only for a verified agent request, with the result in
 * `req.mandate`; refusals are answered for you. Put your cheap checks (does the record exist?)
 * before calling the wrapped handler on sensitive routes: a step-up is used up when accepted.
 */
export function requireAgent<Req extends IncomingMessage = IncomingMessage>(
  verifier: Verifier,
  options: NodeRouteOptions<Req>,
  handler: (req: WithMandate<Req>, res: ServerResponse) => void | Promise<void>,
): (req: Req, res: ServerResponse) => Promise<void> {
  checkScope(options.scope);
  return async (req, res) => {
    const action = actionFor(options.action, req);
    const result = await verifier.verify(fromNodeRequest(req), {
      ...(options.scope === undefined ? {} : { scope: options.scope }),
      ...(action === undefined ? {} : { action }),
    });
    if (!result.ok) return sendRefusal(res, result);
    const verifiedReq = req as WithMandate<Req>;
    verifiedReq.mandate = result;
    await handler(verifiedReq, res);
  };
}
