import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runNode, type Child } from '../../../server/test/helpers/child-process.ts';
import type { HttpOwner } from '../../../server/test/helpers/over-http.ts';
import { freePort, type ServerProcess } from '../../../server/test/helpers/server-process.ts';
import { until } from '../../../server/test/helpers/until.ts';
import { AgentKey } from '../../src/keys/agent-key.ts';
import { saveKeyFile } from '../../src/keys/key-file.ts';

/** The real `mandate-agent` bin of this package. */
export const AGENT_BIN = fileURLToPath(new URL('../../bin/mandate-agent.js', import.meta.url));

/**
 * What `mandate-agent pair` leaves in an agent folder: a key the owner registered, named `name`,
 * saved in `<root>/agent`. Answers the folder and the agent's id.
 */
export async function pairedAgentDir(server: ServerProcess, owner: HttpOwner, root: string, name: string): Promise<{ dir: string; agentId: string }> {
  const key = await AgentKey.generate();
  const agentId = await owner.createAgent(name, key.publicJwk);
  const dir = join(root, 'agent');
  saveKeyFile(dir, { serviceUrl: server.url, agentId, name, key, createdAt: new Date().toISOString() });
  return { dir, agentId };
}

/** A token of the length `mandate-agent mcp --http` asks for (32+ characters). */
export const mcpToken = (): string => randomBytes(24).toString('base64url');

export interface McpHttpProcess {
  child: Child;
  /** `http://127.0.0.1:<port>/mcp`. */
  url: string;
  port: number;
}

/**
 * `mandate-agent mcp --http --port <free port> <args>` as the agent of `agentDir`, with
 * MANDATE_MCP_TOKEN set; ready once its /mcp answers (a request without the token: 401).
 */
export async function startMcpHttp(agentDir: string, token: string, args: string[] = []): Promise<McpHttpProcess> {
  const port = await freePort();
  const child = runNode('mandate-agent mcp --http', [AGENT_BIN, 'mcp', '--http', '--port', String(port), ...args], { env: { MANDATE_AGENT_DIR: agentDir, MANDATE_MCP_TOKEN: token } });
  const url = `http://127.0.0.1:${port}/mcp`;
  await until('mandate-agent mcp --http listening', async () => {
    if (!child.running()) throw new Error(`mandate-agent mcp --http exited (${await child.exited}):\n${child.output()}`);
    try {
      return (await fetch(url, { method: 'POST' })).status;
    } catch {
      return undefined; // not listening yet
    }
  }, { ms: 30_000, describe: child.output });
  return { child, url, port };
}
