import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import express from 'express';
import Fastify from 'fastify';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { freePort } from '../../../server/test/helpers/server-process.ts';
import { type McpAuth, type McpAuthOptions, mcpAuth } from '../../src/index.ts';
import { mcpMetadata as expressMetadata, requireMcpAuth as expressGuard } from '../../src/express.ts';
import { mcpMetadata as fastifyMetadata, requireMcpAuth as fastifyGuard } from '../../src/fastify.ts';

export const FRAMEWORKS = ['node', 'express', 'fastify'] as const;
export type Framework = (typeof FRAMEWORKS)[number];

/** The tools of the test server, and what each needs. */
export const TOOLS: McpAuthOptions['tools'] = {
  read_notes: { scopes: ['notes:read'] },
  write_note: { scopes: ['notes:write'] },
  delete_note: { scopes: ['notes:write'], approval: true, summary: (args) => `Delete the note ${String(args['id'])}` },
  archive_all: { approval: true },
};

export type McpApp = {
  framework: Framework;
  url: string;
  resource: string;
  mandate: McpAuth;
  /** Every run of an approval tool's handler, with its arguments. */
  ran: unknown[];
  close(): Promise<void>;
};

/** One MCP server per request (the SDK's stateless pattern), its tools reading `extra.authInfo`. */
function notesServer(mandate: McpAuth, ran: unknown[]): McpServer {
  const server = new McpServer({ name: 'notes', version: '1.0.0' });
  const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] });
  server.registerTool('whoami', { inputSchema: {} }, async (_args, extra) => text(JSON.stringify({ ...extra.authInfo, resource: extra.authInfo?.resource?.href })));
  server.registerTool('read_notes', { inputSchema: {} }, async () => text('note 1, note 2'));
  server.registerTool('write_note', { inputSchema: { text: z.string() } }, async ({ text: t }) => text(`wrote ${t}`));
  server.registerTool(
    'delete_note',
    { inputSchema: { id: z.string() } },
    mandate.withApproval('delete_note', async (args: { id: string }) => {
      ran.push(args);
      return text(`deleted ${args.id}`);
    }),
  );
  server.registerTool(
    'archive_all',
    { inputSchema: { folder: z.string().optional() } },
    mandate.withApproval('archive_all', async (args: { folder?: string | undefined }) => {
      ran.push(args);
      return text('archived');
    }),
  );
  return server;
}

async function serveMcp(mandate: McpAuth, ran: unknown[], req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
  const server = notesServer(mandate, ran);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}

/** An MCP server at `http://127.0.0.1:<port>/mcp` guarded by mcpAuth in the given framework (Express: with express.json() unless told). */
export async function startMcpApp(framework: Framework, options: (resource: string) => McpAuthOptions, o: { expressJson?: boolean } = {}): Promise<McpApp> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const resource = `${url}/mcp`;
  const mandate = mcpAuth(options(resource));
  const ran: unknown[] = [];
  const fail = (res: ServerResponse) => (e: unknown) => {
    console.error(e);
    if (!res.headersSent) res.writeHead(500).end();
  };

  if (framework === 'node') {
    const server = createServer((req, res) => {
      void (async () => {
        const verified = await mandate.handle(req, res);
        if (verified === undefined) return;
        await serveMcp(mandate, ran, verified, res, verified.body);
      })().catch(fail(res));
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    return { framework, url, resource, mandate, ran, close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))) };
  }

  if (framework === 'express') {
    const app = express();
    app.use(expressMetadata(mandate));
    // Without express.json() the guard reads the body itself.
    const parsers = o.expressJson === false ? [] : [express.json({ limit: '1mb' })];
    app.all('/mcp', ...parsers, expressGuard(mandate), (req, res) => void serveMcp(mandate, ran, req, res, req.body).catch(fail(res)));
    const server = app.listen(port, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    return { framework, url, resource, mandate, ran, close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))) };
  }

  const app = Fastify();
  await app.register(fastifyMetadata(mandate));
  app.all('/mcp', { preHandler: fastifyGuard(mandate) }, async (request, reply) => {
    reply.hijack();
    await serveMcp(mandate, ran, request.raw, reply.raw, request.body);
  });
  await app.listen({ port, host: '127.0.0.1' });
  return { framework, url, resource, mandate, ran, close: () => app.close() };
}

/** The official MCP client, connected to the app with the given fetch (which adds the pass). */
export async function connectClient(app: McpApp, fetchImpl: typeof fetch): Promise<Client> {
  const client = new Client({ name: 'mcp-auth-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(app.resource), { fetch: fetchImpl }));
  return client;
}

/** A JSON-RPC POST to the app as an MCP client sends it, with the given headers. */
export function rpc(app: McpApp, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(app.resource, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export const toolCall = (name: string, args: Record<string, unknown> = {}, id: number = 1) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
