import type { IncomingMessage, ServerResponse } from 'node:http';
import { replayCacheFrom } from '../local/replay-cache.ts';
import { readJsonBodyOrWhy } from '../node-body.ts';
import { fromNodeRequest } from '../node.ts';
import type { MandateRequest, Mode } from '../types.ts';
import type { VerifierStatus } from '../verifier.ts';
import { type ApprovalExtra, Approvals, type ToolErrorResult } from './approval.ts';
import { type McpAnswer, type McpAuthInfo, type McpAuthResult, McpGuard } from './guard.ts';
import type { ProtectedResourceMetadata } from './metadata.ts';
import { metadataOf } from './metadata.ts';
import { type McpAuthOptions, parseMcpOptions } from './options.ts';
import { CloudResourceVerifier, LocalResourceVerifier, type ResourceVerifier } from './resource-verify.ts';

/** A node:http request that passed `handle`: its pass in `auth` (the MCP SDK reads it) and, for a POST, its parsed JSON body. */
export type McpNodeRequest = IncomingMessage & { auth: McpAuthInfo; body?: unknown };

/**
 * An MCP server protected by Mandate (decisions §28). Framework adapters: `handle` (node:http, here),
 * `mcpMetadata` / `requireMcpAuth` in `@mandate/site/express` and `@mandate/site/fastify`.
 */
export interface McpAuth {
  readonly mode: Mode;
  /** The resource identifier, as passes name it in `aud`. */
  readonly resource: string;
  /** The RFC 9728 metadata served. */
  readonly metadata: ProtectedResourceMetadata;
  /** Where it is served: `/.well-known/oauth-protected-resource` + the resource's path, and the bare path. */
  readonly metadataPaths: readonly string[];
  /** The `resource_metadata` URL of every challenge. */
  readonly metadataUrl: string;

  /**
   * node:http: answers the metadata (GET of its paths) and every refusal itself and resolves
   * undefined; otherwise resolves the request with `auth` set and, for a POST, `body` parsed (read
   * here unless a parser left it in `req.body`), to hand to
   * `transport.handleRequest(req, res, req.body)`. Guards every other request it is given.
   */
  handle(req: IncomingMessage, res: ServerResponse): Promise<McpNodeRequest | undefined>;

  /** Framework-free: the pass of a request, verified, or the answer to send (401 with its challenge, 400, 503). */
  authenticate(request: MandateRequest): Promise<McpAuthResult>;
  /** Framework-free: for a POSTed JSON-RPC body, the 403 `insufficient_scope` to send, or undefined. */
  authorize(auth: McpAuthInfo, body: unknown): McpAnswer | undefined;
  /** Framework-free: the metadata answer for a request to one of its paths, or undefined. */
  metadataAnswer(method: string | undefined, target: string): McpAnswer | undefined;
  /** Framework-free: the answer for a POST body that could not be read. */
  badBody(why: 'too_large' | 'not_json'): McpAnswer;

  /**
   * Wraps a tool handler so it runs only after the owner approves that very call on their phone
   * (tool name and arguments), waiting up to 25 s with progress notifications; otherwise returns a
   * tool error (denied, expired, or "call again with the same arguments"). An identical call within
   * 5 minutes continues the same request; each approval runs the handler once. The open requests
   * are held in memory, per process.
   */
  withApproval<A, E extends ApprovalExtra, R>(name: string, handler: (args: A, extra: E) => R | Promise<R>): (args: A, extra: E) => Promise<R | ToolErrorResult>;
  /** The same, inside a handler: undefined when approved (run the tool), else the tool error to return. */
  requireApproval(extra: ApprovalExtra, name: string, args: unknown): Promise<ToolErrorResult | undefined>;

  /**
   * Local mode: loads keys and revocation list, then follows Mandate's revocation event stream (a
   * revocation is refused within a second), polling every revTtlSec while the stream is down or with
   * `revocation: 'poll'`; rejects if the first load fails (stream and polling go on). Cloud: nothing.
   */
  start(): Promise<void>;
  refresh(): Promise<void>;
  status(): Pick<VerifierStatus, 'mode' | 'ready'> & { resource: string; pendingApprovals: number };
  close(): void;
}

/** Sends an answer on a node:http response (HEAD without a body). */
export function sendMcpAnswer(res: ServerResponse, answer: McpAnswer, method?: string): void {
  if (res.headersSent) return;
  res.writeHead(answer.status, answer.headers);
  res.end(method === 'HEAD' ? undefined : JSON.stringify(answer.body));
}

/**
 * Protects an MCP server with Mandate: RFC 9728 metadata, 401 challenges that start MCP clients'
 * authorization, resource passes (DPoP-bound or bearer) whose `aud` is exactly `resource`, 403
 * `insufficient_scope` for a tool whose scopes the pass lacks, and the owner's approval of tool
 * calls (`withApproval`). Throws for bad options.
 */
export function mcpAuth(options: McpAuthOptions): McpAuth {
  const config = parseMcpOptions(options);
  const replayCache = replayCacheFrom(options.replayCache); // validated in either mode: a bad value is a bug of the server
  const verifier: ResourceVerifier = config.verifier.mode === 'local' ? new LocalResourceVerifier(config, replayCache) : new CloudResourceVerifier(config);
  const guard = new McpGuard(config, verifier);
  const approvals = new Approvals(config);

  return {
    mode: config.verifier.mode,
    resource: config.resource,
    metadata: metadataOf(config),
    metadataPaths: guard.metadataPaths,
    metadataUrl: guard.metadataUrl,

    async handle(req, res) {
      const metadata = guard.metadata(req.method, req.url ?? '');
      if (metadata !== undefined) return void sendMcpAnswer(res, metadata, req.method);
      const authenticated = await guard.authenticate(fromNodeRequest(req));
      if (!authenticated.ok) return void sendMcpAnswer(res, authenticated.answer, req.method);
      const request = req as McpNodeRequest;
      if (req.method === 'POST') {
        if (request.body === undefined) {
          const read = await readJsonBodyOrWhy(req);
          if (!('json' in read)) return void sendMcpAnswer(res, guard.badBody(read.error));
          request.body = read.json;
        }
        const refused = guard.authorize(authenticated.auth, request.body);
        if (refused !== undefined) return void sendMcpAnswer(res, refused);
      }
      request.auth = authenticated.auth;
      return request;
    },

    authenticate: (request) => guard.authenticate(request),
    authorize: (auth, body) => guard.authorize(auth, body),
    metadataAnswer: (method, target) => guard.metadata(method, target),
    badBody: (why) => guard.badBody(why),

    withApproval: (name, handler) => approvals.wrap(name, handler),
    requireApproval: (extra, name, args) => approvals.require(extra, name, args),

    start: () => verifier.start(),
    refresh: () => verifier.refresh(),
    close: () => verifier.close(),
    status: () => ({ mode: config.verifier.mode, ready: verifier.ready(), resource: config.resource, pendingApprovals: approvals.open }),
  };
}
