import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { Verifier } from './verifier.ts';
import { readJsonBody } from './node-body.ts';
import { type ParsedBody, type RouteOptions, checkRouteOptions, declaresJson, isRefused, requirementsFor } from './route-options.ts';
import type { MandateRequest, Refused, Verified } from './types.ts';

/** The framework-free request of a node:http request (`url` may be given, e.g. Express's `originalUrl`). */
export function fromNodeRequest(req: IncomingMessage, url: string = req.url ?? ''): MandateRequest {
  return { method: req.method ?? '', url, headers: req.headers, secure: (req.socket as Partial<TLSSocket> | undefined)?.encrypted === true };
}

/** The JSON body of a refusal: `{"error": code, "error_description": text}`, plus `action` (and the route's `summary`) with stepup_required. */
export function refusalBody(r: Refused): { error: string; error_description: string; action?: string; summary?: string } {
  return {
    error: r.error,
    error_description: r.description,
    ...(r.action === undefined ? {} : { action: r.action }),
    ...(r.summary === undefined ? {} : { summary: r.summary }),
  };
}

/** Answers a refusal as the site rules say (status and `{"error": ...}`). */
export function sendRefusal(res: ServerResponse, r: Refused): void {
  if (res.headersSent) return;
  res.writeHead(r.status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' }).end(JSON.stringify(refusalBody(r)));
}

/** A route's needs; `action` and `summary` may depend on the request (`(req) => \`pay order ${id}\``). */
export type NodeRouteOptions<Req> = RouteOptions<Req>;

export type WithMandate<Req extends IncomingMessage = IncomingMessage> = Req & {
  mandate: Verified;
  /** On a route with `bindBody`: the JSON body, parsed (read here unless the site had set `req.body` already). */
  body?: unknown;
};

/**
 * node:http: wraps a handler so that it runs only for a verified agent request, with the result in
 * `req.mandate`; refusals are answered for you. Put your cheap checks (does the record exist?)
 * before calling the wrapped handler on sensitive routes: a step-up is used up when accepted.
 * With `bindBody`, the JSON body is read (up to 1 MiB) and parsed into `req.body`, unless your
 * cheap checks read it first and left it there.
 */
export function requireAgent<Req extends IncomingMessage = IncomingMessage>(
  verifier: Verifier,
  options: NodeRouteOptions<Req>,
  handler: (req: WithMandate<Req>, res: ServerResponse) => void | Promise<void>,
): (req: Req, res: ServerResponse) => Promise<void> {
  checkRouteOptions(options);
  return async (req, res) => {
    const body = options.bindBody === true ? await nodeJsonBody(req) : undefined;
    const route = requirementsFor(options, req, body);
    if (isRefused(route)) return sendRefusal(res, route);
    const result = await verifier.verify(fromNodeRequest(req), route);
    if (!result.ok) return sendRefusal(res, result);
    const verifiedReq = req as WithMandate<Req>;
    verifiedReq.mandate = result;
    await handler(verifiedReq, res);
  };
}

/** The JSON body of a node:http request: `req.body` when the site parsed it already, else read and parsed here. */
async function nodeJsonBody(req: IncomingMessage & { body?: unknown }): Promise<ParsedBody> {
  if (!declaresJson(req.headers)) return undefined;
  if (req.body === undefined) {
    const read = await readJsonBody(req);
    if (read === undefined) return undefined;
    req.body = read.json;
  }
  return { json: req.body };
}
