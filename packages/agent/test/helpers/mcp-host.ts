import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { type Child, runNode } from '../../../server/test/helpers/child-process.ts';
import type { HttpOwner } from '../../../server/test/helpers/over-http.ts';
import type { ServerProcess } from '../../../server/test/helpers/server-process.ts';
import { AgentKey } from '../../src/keys/agent-key.ts';
import { saveKeyFile } from '../../src/keys/key-file.ts';

/**
 * The MCP host side of the tests: the official SDK `Client`, talking to the real `mandate-agent mcp`
 * bin over stdio or streamable HTTP, as an agent directory `mandate-agent pair` would leave it.
 */

export const BIN = fileURLToPath(new URL('../../bin/mandate-agent.js', import.meta.url));

export type AgentDir = { dir: string; agentId: string; key: AgentKey; remove(): void };

/** An agent the owner created, with its key saved as `init`/`pair` would. */
export async function agentDir(server: ServerProcess, owner: HttpOwner, name: string): Promise<AgentDir> {
  const root = mkdtempSync(join(tmpdir(), 'mandate-mcp-'));
  const key = await AgentKey.generate();
  const agentId = await owner.createAgent(name, key.publicJwk);
  const dir = join(root, 'agent');
  saveKeyFile(dir, { serviceUrl: server.url, agentId, name, key, createdAt: new Date().toISOString() });
  return { dir, agentId, key, remove: () => rmSync(root, { recursive: true, force: true }) };
}

export type McpSession = {
  client: Client;
  /** What the server wrote to stderr (stdio) or its output (HTTP) so far. */
  log(): string;
  /** Every tool result of the session, in order, for the secrets scan. */
  results: CallToolResult[];
  call(name: string, args?: Record<string, unknown>, opts?: { onprogress?: (p: { progress: number; message?: string }) => void }): Promise<CallToolResult>;
  close(): Promise<void>;
};

/** A host session over a connected `client`: its calls are recorded (for the secrets scans) and wait as long as a model's host would. */
export function session(client: Client, log: () => string, close: () => Promise<void>): McpSession {
  const results: CallToolResult[] = [];
  return {
    client,
    log,
    results,
    async call(name, args = {}, opts = {}) {
      const result = (await client.callTool({ name, arguments: args }, undefined, {
        timeout: 320_000,
        resetTimeoutOnProgress: true,
        ...(opts.onprogress ? { onprogress: opts.onprogress } : {}),
      })) as CallToolResult;
      results.push(result);
      return result;
    },
    close,
  };
}

/** `mandate-agent mcp --dir DIR ...args` over stdio. */
export async function stdioSession(dir: string, args: string[] = []): Promise<McpSession> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', '--dir', dir, ...args], stderr: 'pipe', env: { PATH: process.env['PATH'] ?? '' } });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const client = new Client({ name: 'mcp-test-host', version: '1.0.0' });
  await client.connect(transport);
  return session(client, () => stderr, () => client.close());
}

/** `mandate-agent mcp --http` as a process; resolves once it listens. */
export async function httpServer(dir: string, port: number, token: string | undefined, args: string[] = []): Promise<Child> {
  const child = runNode('mandate-agent mcp --http', [BIN, 'mcp', '--http', '--port', String(port), '--dir', dir, ...args], { env: token === undefined ? {} : { MANDATE_MCP_TOKEN: token } });
  await child.waitFor('serving MCP at');
  return child;
}

/** A host connected to `url` with the bearer token. */
export async function httpSession(url: string, token: string, log: () => string = () => ''): Promise<McpSession> {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  const client = new Client({ name: 'mcp-test-host', version: '1.0.0' });
  await client.connect(transport);
  return session(client, log, async () => {
    await transport.terminateSession().catch(() => undefined);
    await client.close();
  });
}

/** The structured content of a result, typed loosely for assertions. */
export function structured(r: CallToolResult): Record<string, any> {
  return (r.structuredContent ?? {}) as Record<string, any>;
}

export function text(r: CallToolResult): string {
  return r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}
