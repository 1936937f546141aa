import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Child } from '../../server/test/helpers/child-process.ts';
import { HttpOwner } from '../../server/test/helpers/over-http.ts';
import { freePort, startServer, type ServerProcess } from '../../server/test/helpers/server-process.ts';
import { agentDir, httpServer, type AgentDir } from './helpers/mcp-host.ts';
import { startBearerProxy, type BearerProxy } from './helpers/bearer-proxy.ts';
import { conformanceNode, problems, runScenario } from './helpers/conformance.ts';

// The official MCP conformance suite (@modelcontextprotocol/conformance, under the Node 22 that
// `npm run test:setup` installs) against the real `mandate-agent mcp --http`, acting as an agent
// paired with a real service: initialisation, the tool list, ping, and DNS rebinding protection.
//
// The suite's client sends no Authorization header, and the server refuses every request without
// `Authorization: Bearer <MANDATE_MCP_TOKEN>` (decisions §27). So the suite talks to a local
// forwarding proxy that adds the header, as a host configured with the token does, and forwards
// Host and Origin unchanged: the Host the server sees is the proxy's address (127.0.0.1:<proxy
// port>), which the server is told to accept with `--allowed-host`, as it would accept the name a
// host reaches it by. Its own listen address is not what the suite's requests carry. The
// dns-rebinding-protection scenario then sends `Host: evil.example.com` with a matching Origin
// (must be refused with a 4xx even with a valid token) and the proxy's own address (must be
// accepted), so the Host and Origin checks are what it measures, through the token.

const SCENARIOS = ['server-initialize', 'tools-list', 'ping', 'dns-rebinding-protection'];
/** The tools of decisions §27: the list the suite checked must be this server's, not an empty one. */
const TOOLS = ['mandate_status', 'mandate_request_access', 'mandate_fetch', 'mandate_request_approval', 'mandate_notify_owner', 'mandate_plan_submit', 'mandate_plan_status', 'mandate_request_takeover', 'mandate_wait'];

describe('MCP conformance of mandate-agent mcp --http', { timeout: 240_000 }, () => {
  let server: ServerProcess;
  let agent: AgentDir;
  let proxy: BearerProxy;
  let mcp: Child;
  let mcpUrl = '';

  before(async () => {
    conformanceNode(); // fails at once, saying to run `npm run test:setup`, when there is no Node 22
    server = await startServer({ name: 'conformance service' });
    const owner = await HttpOwner.signUp(server, server.baseUrl);
    agent = await agentDir(server, owner, 'Conformance bot');
    const token = randomBytes(32).toString('hex');
    const port = await freePort();
    mcpUrl = `http://127.0.0.1:${port}/mcp`;
    proxy = await startBearerProxy(mcpUrl, token);
    mcp = await httpServer(agent.dir, port, token, ['--allowed-host', proxy.host]);
  });

  after(async () => {
    await mcp?.stop();
    await proxy?.close();
    await server?.stop();
    agent?.remove();
  });

  it('without the proxy, the suite\'s requests (no token) are refused', async () => {
    const res = await fetch(mcpUrl, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }) });
    assert.equal(res.status, 401);
  });

  for (const scenario of SCENARIOS) {
    it(`${scenario} passes`, async () => {
      const before = proxy.forwarded();
      const run = await runScenario(`${proxy.url}/mcp`, scenario);
      const shown = `${run.output}\n--- mandate-agent mcp\n${mcp.output()}`;
      assert.deepEqual(problems(run), [], shown);
      assert.ok(run.checks.some((c) => c.status === 'SUCCESS'), `no check passed:\n${shown}`);
      assert.equal(run.exitCode, 0, shown);
      assert.ok(proxy.forwarded() > before, 'the suite went through the proxy to the server');
      if (scenario === 'tools-list') {
        const listed = (run.checks.find((c) => c.id === 'tools-list')?.details as { tools?: string[] } | undefined)?.tools ?? [];
        assert.deepEqual([...listed].sort(), [...TOOLS].sort(), shown);
      }
    });
  }
});
