import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { MandateAgent } from '../../src/agent.ts';
import type { FetchLike } from '../../src/client/http.ts';
import { AgentKey } from '../../src/keys/agent-key.ts';
import { buildMandateTools, serveTools, type MandateMcpOptions } from '../../src/mcp/server.ts';
import { session, type McpSession } from './mcp-host.ts';

export const FAKE_SERVICE_URL = 'http://mandate.test';

/**
 * The MCP server in this process, for what a real service cannot be made to do on demand (a
 * request that expires takes 5 minutes there): the agent talks to `serviceFetch` (the scripted
 * stand-in, fake-service.ts) for the service and to the network for sites, and the official SDK
 * Client is the host, over the SDK's in-memory transport.
 */
export async function inProcessSession(serviceFetch: FetchLike, opts: Omit<MandateMcpOptions, 'shutdown'> = {}): Promise<McpSession> {
  const fetchImpl: FetchLike = (input, init) => (String(input).startsWith(`${FAKE_SERVICE_URL}/`) ? serviceFetch(input, init) : fetch(input, init));
  const agent = new MandateAgent({ serviceUrl: FAKE_SERVICE_URL, agentId: 'ag_in_process', privateKey: await AgentKey.generate(), fetch: fetchImpl });
  const stopping = new AbortController();
  const server = serveTools(buildMandateTools(agent, { pollIntervalMs: 20, ...opts, shutdown: stopping.signal }));
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'mcp-test-host', version: '1.0.0' });
  await client.connect(clientSide);
  return session(client, () => '', async () => {
    stopping.abort();
    await client.close();
    await server.close();
  });
}
