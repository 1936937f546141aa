import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { MandateAgent } from '../agent.ts';
import type { McpDeps } from './context.ts';
import { MCP_LIMITS } from './limits.ts';
import { PendingRegistry } from './pending.ts';
import { toolError } from './results.ts';
import type { SiteOperationTool } from './site-tool.ts';
import type { McpTool, ProgressSink } from './tool.ts';
import { mandateTools } from './tools/index.ts';

export type MandateMcpOptions = {
  agentDir?: string;
  agentName?: string | null;
  /** Default `wait_seconds` (240, at most 290). */
  waitSeconds?: number;
  /** Between polls while the owner decides (default 2000 ms). */
  pollIntervalMs?: number;
  /** One site call's limit (default 30 s). */
  siteTimeoutMs?: number;
  /** Tools of sites described by OpenAPI (`--openapi`). */
  siteTools?: readonly SiteOperationTool[];
  /** Abort when the server stops: work still waiting for the owner stops too. */
  shutdown?: AbortSignal;
  /** Logs go here (stderr in the CLI); never a secret. */
  log?: (line: string) => void;
};

const SERVER_INFO = { name: 'mandate-agent', version: '0.1.0' } as const;

const INSTRUCTIONS = `You act as one Mandate agent. Ask the owner for access to a site with mandate_request_access, then call it with mandate_fetch (or the site's own tools): the pass, its proof and any step-up the site asks for are handled here and never shown to you. When a tool answers {"status": "pending", "txn_id"}, the owner has not decided yet: call mandate_wait with that txn_id later.`;

/**
 * The tools of one agent, built once per process: every MCP session (one over stdio, several over
 * HTTP) serves the same tools and shares the work that waits for the owner.
 */
export function buildMandateTools(agent: MandateAgent, opts: MandateMcpOptions = {}): McpTool[] {
  const shutdown = opts.shutdown ?? new AbortController().signal;
  const deps: McpDeps = {
    agent,
    agentDir: opts.agentDir,
    agentName: opts.agentName ?? null,
    pending: new PendingRegistry(opts.pollIntervalMs ?? 2000, shutdown),
    shutdown,
    waitSeconds: Math.min(opts.waitSeconds ?? MCP_LIMITS.defaultWaitSeconds, MCP_LIMITS.maxWaitSeconds),
    siteTimeoutMs: opts.siteTimeoutMs ?? MCP_LIMITS.siteCallMs,
  };
  const tools = mandateTools(deps, opts.siteTools ?? []);
  const names = new Set<string>();
  for (const t of tools) {
    if (names.has(t.name)) throw new Error(`two tools are named ${t.name}; rename one of the OpenAPI operations (x-mandate.name)`);
    names.add(t.name);
  }
  return tools;
}

/** An MCP server (one session) offering `tools`; connect it to a transport. */
export function serveTools(tools: readonly McpTool[], log: (line: string) => void = () => undefined): Server {
  const server = new Server(SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  const byName = new Map(tools.map((t) => [t.name, t]));
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.map((t) => ({
      name: t.name,
      ...(t.title ? { title: t.title } : {}),
      description: t.description,
      inputSchema: t.inputSchema,
      ...(t.outputSchema ? { outputSchema: t.outputSchema } : {}),
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const tool = byName.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `unknown tool ${JSON.stringify(request.params.name)}`);
    const token = request.params._meta?.progressToken;
    const progress: ProgressSink | undefined = token === undefined
      ? undefined
      : (p) => extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, ...p } });
    try {
      return await tool.run(request.params.arguments ?? {}, { signal: extra.signal, progress });
    } catch (e) {
      const result = toolError(e);
      // The log line passes through the CLI's token redaction (cli/commands/mcp.ts).
      if ((result.structuredContent as { error?: string } | undefined)?.error === 'internal_error') log(`tool ${tool.name} failed: ${e instanceof Error ? `${e.name}: ${e.message}` : typeof e}`);
      return result;
    }
  });
  return server;
}

/** `buildMandateTools` then `serveTools`: one server for one transport (stdio). */
export function createMandateMcpServer(agent: MandateAgent, opts: MandateMcpOptions = {}): Server {
  return serveTools(buildMandateTools(agent, opts), opts.log);
}
