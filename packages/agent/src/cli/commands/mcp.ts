import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { loadKeyFile } from '../../keys/key-file.ts';
import { startMcpHttp, McpTokenError } from '../../mcp/http.ts';
import { MCP_LIMITS } from '../../mcp/limits.ts';
import { loadOpenApiTools } from '../../mcp/openapi/load.ts';
import { redactTokens } from '../../mcp/redact.ts';
import { buildMandateTools, serveTools } from '../../mcp/server.ts';
import type { SiteOperationTool } from '../../mcp/site-tool.ts';
import type { CliContext, Command } from '../command.ts';
import { agentFromDir } from '../agent-from-dir.ts';
import { UsageError } from '../exit-codes.ts';
import { flag, list, seconds, str } from '../values.ts';

export const mcpCommand: Command = {
  name: 'mcp',
  summary: 'serve this agent\'s tools to an AI model over MCP (stdio, or --http)',
  usage: 'mandate-agent mcp [--http] [--host H] [--port P] [--allowed-host H]... [--openapi URL|FILE]... [--all-operations] [--site ID] [--wait-seconds N]',
  help: `Runs an MCP server acting as this agent (the key and state of --dir / MANDATE_AGENT_DIR). The model
gets tools (mandate_status, mandate_request_access, mandate_fetch, mandate_request_approval,
mandate_notify_owner, mandate_plan_submit, mandate_plan_status, mandate_request_takeover,
mandate_wait); the pass, its DPoP proofs, refresh and step-up tokens stay in this process.

By default it speaks MCP on stdin/stdout (logs go to stderr). With --http it serves streamable HTTP
at http://HOST:PORT/mcp and needs MANDATE_MCP_TOKEN (32+ characters), which clients send as
"Authorization: Bearer <token>"; the Host and Origin headers must name the listen address or an
--allowed-host.

  --http               serve streamable HTTP instead of stdio
  --host H             listen address for --http (default 127.0.0.1)
  --port P             port for --http (default 8765; 0 picks a free one)
  --allowed-host H     another host name clients may use in Host/Origin (repeatable)
  --openapi URL|FILE   add a tool per operation of this OpenAPI description (repeatable)
  --all-operations     with --openapi, also operations without an x-mandate extension
  --site ID            with --openapi, the site id of its tools (default: the server URL's host)
  --wait-seconds N     how long a tool waits for the owner before answering "pending" (default 240, at most 290)
  --interval SEC       seconds between polls while waiting (default 2)`,
  options: {
    http: { type: 'boolean' },
    host: { type: 'string' },
    port: { type: 'string' },
    'allowed-host': { type: 'string', multiple: true },
    openapi: { type: 'string', multiple: true },
    'all-operations': { type: 'boolean' },
    site: { type: 'string' },
    'wait-seconds': { type: 'string' },
    interval: { type: 'string' },
  },
  positionals: { min: 0, max: 0 },

  async run(ctx, values) {
    const waitMs = seconds(values, 'wait-seconds', 'mcp', { min: 1, max: MCP_LIMITS.maxWaitSeconds });
    const pollIntervalMs = seconds(values, 'interval', 'mcp', { min: 0.2, max: 60 });
    const http = flag(values, 'http');
    const port = Number(str(values, 'port') ?? '8765');
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError('--port must be a port number (0 to 65535)', 'mcp');
    if (!http && (str(values, 'host') || str(values, 'port') || list(values, 'allowed-host').length)) throw new UsageError('--host, --port and --allowed-host go with --http', 'mcp');
    const agent = agentFromDir(ctx);
    const log = (line: string) => ctx.out.stderr.write(`mandate-agent mcp: ${redactTokens(line)}\n`);
    const siteTools = await loadSiteTools(values['openapi'] === undefined ? [] : list(values, 'openapi'), flag(values, 'all-operations'), str(values, 'site'));
    // Stopping the server stops the work still waiting for the owner, so the process ends at once.
    const stopping = new AbortController();
    const tools = buildMandateTools(agent, {
      shutdown: stopping.signal,
      agentDir: ctx.dir,
      agentName: loadKeyFile(ctx.dir).name,
      ...(waitMs !== undefined ? { waitSeconds: waitMs / 1000 } : {}),
      ...(pollIntervalMs !== undefined ? { pollIntervalMs } : {}),
      siteTools,
      log,
    });
    if (!http) {
      await serveStdio(ctx, () => serveTools(tools, log), log);
      stopping.abort();
      return;
    }
    let server;
    try {
      server = await startMcpHttp({
        host: str(values, 'host') ?? '127.0.0.1',
        port,
        token: ctx.env['MANDATE_MCP_TOKEN'],
        allowedHosts: list(values, 'allowed-host'),
        newServer: () => serveTools(tools, log),
      });
    } catch (e) {
      if (e instanceof McpTokenError) throw new UsageError(e.message, 'mcp');
      throw e;
    }
    log(`agent ${agent.agentId} serving MCP at ${server.url} (${tools.length} tools)`);
    const stopped = untilStopped(ctx.signal);
    await stopped.promise;
    stopped.dispose();
    stopping.abort();
    await server.close();
  },
};

/**
 * MCP over stdin/stdout until the host closes stdin (or Ctrl-C, or SIGTERM). Nothing else is
 * written to stdout; once closed, nothing at all (the SDK drops the answers of calls still running).
 */
async function serveStdio(ctx: CliContext, newServer: () => ReturnType<typeof serveTools>, log: (line: string) => void): Promise<void> {
  const server = newServer();
  const transport = new StdioServerTransport();
  const stopped = untilStopped(ctx.signal);
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
  });
  await server.connect(transport);
  log('serving MCP on stdio');
  await Promise.race([closed, stopped.promise]);
  stopped.dispose();
  await server.close();
}

/** Resolves on Ctrl-C (the CLI's signal) or SIGTERM (how hosts and service managers stop a server): a clean stop, exit code 0. */
function untilStopped(signal: AbortSignal): { promise: Promise<void>; dispose(): void } {
  let stop!: () => void;
  const promise = new Promise<void>((resolve) => (stop = resolve));
  signal.addEventListener('abort', stop, { once: true });
  process.once('SIGTERM', stop);
  return {
    promise,
    dispose() {
      signal.removeEventListener('abort', stop);
      process.removeListener('SIGTERM', stop);
    },
  };
}

async function loadSiteTools(sources: string[], allOperations: boolean, site: string | undefined): Promise<SiteOperationTool[]> {
  if (sources.length === 0) {
    if (allOperations || site) throw new UsageError('--all-operations and --site go with --openapi', 'mcp');
    return [];
  }
  try {
    return await loadOpenApiTools(sources, { allOperations, ...(site ? { site } : {}) });
  } catch (e) {
    // The reader's messages say what to fix in the description (or the flag): a usage error, exit 2.
    throw new UsageError((e as Error).message, 'mcp');
  }
}
