import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { HttpGuard, MIN_TOKEN_LENGTH } from './http-guard.ts';
import { MCP_LIMITS } from './limits.ts';

export type McpHttpOptions = {
  host: string;
  port: number;
  /** `MANDATE_MCP_TOKEN`: at least 32 characters. */
  token: string | undefined;
  allowedHosts: readonly string[];
  /** A fresh MCP server for each session (they share the agent's tools). */
  newServer: () => Server;
};

export type McpHttpServer = { url: string; close(): Promise<void> };

/** A JSON-RPC message holds a tool call's arguments: a 1 MB request body and some room around it. */
const MAX_MESSAGE_BYTES = MCP_LIMITS.requestBodyBytes * 2 + 64 * 1024;
const MAX_SESSIONS = 64;

export class McpTokenError extends Error {}

/**
 * Streamable HTTP at `/mcp` (decisions §27): each session gets its own MCP server over the shared
 * tools. Every request is checked first (http-guard.ts); anything else answers a JSON 4xx.
 */
export async function startMcpHttp(opts: McpHttpOptions): Promise<McpHttpServer> {
  if (!opts.token || opts.token.length < MIN_TOKEN_LENGTH) {
    throw new McpTokenError(`--http needs MANDATE_MCP_TOKEN: a secret of at least ${MIN_TOKEN_LENGTH} characters that clients send as "Authorization: Bearer <token>" (for example: openssl rand -hex 32)`);
  }
  const guard = new HttpGuard(opts.token, opts.host, opts.allowedHosts);
  const sessions = new Map<string, StreamableHTTPServerTransport>();

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/mcp') return refuse(res, 404, 'not_found', 'the MCP endpoint is /mcp');
    const refusal = guard.check(req);
    if (refusal) {
      if (refusal.status === 401) res.setHeader('www-authenticate', 'Bearer');
      return refuse(res, refusal.status, refusal.error, refusal.detail);
    }
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const transport = sessions.get(sessionId);
      if (!transport) return refuse(res, 404, 'unknown_session', 'no such session (it ended); initialize a new one');
      if (req.method !== 'POST') return transport.handleRequest(req, res);
      const message = await readJson(req, res);
      if (message !== NOT_READ) await transport.handleRequest(req, res, message);
      return;
    }
    if (req.method !== 'POST') return refuse(res, 400, 'no_session', 'send the initialize request first (POST), then the Mcp-Session-Id it answers');
    const body = await readJson(req, res);
    if (body === NOT_READ) return;
    if (!isInitializeRequest(body)) return refuse(res, 400, 'no_session', 'send the initialize request first, then the Mcp-Session-Id it answers');
    if (sessions.size >= MAX_SESSIONS) return refuse(res, 503, 'too_many_sessions', `at most ${MAX_SESSIONS} sessions at once; end one (DELETE /mcp) first`);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void sessions.set(id, transport),
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await opts.newServer().connect(transport);
    await transport.handleRequest(req, res, body);
  };

  const http = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) refuse(res, 400, 'bad_request', 'the request could not be read');
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(opts.port, opts.host, () => resolve());
  });
  const { port } = http.address() as AddressInfo;
  const shownHost = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  return {
    url: `http://${shownHost}:${port}/mcp`,
    async close() {
      await Promise.all([...sessions.values()].map((t) => t.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

const NOT_READ = Symbol('not read');

/** The JSON body, or NOT_READ after answering 413/400 itself. */
async function readJson(req: IncomingMessage, res: ServerResponse): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_MESSAGE_BYTES) {
      refuse(res, 413, 'too_large', `a message may hold at most ${MAX_MESSAGE_BYTES} bytes`);
      return NOT_READ;
    }
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    refuse(res, 400, 'invalid_json', 'the body is not JSON');
    return NOT_READ;
  }
}

function refuse(res: ServerResponse, status: number, error: string, detail: string): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error, detail }));
}
