import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HttpOwner } from '../../server/test/helpers/over-http.ts';
import { startServer, type ServerProcess } from '../../server/test/helpers/server-process.ts';
import { mcpToken, pairedAgentDir, startMcpHttp, type McpHttpProcess } from './helpers/agent-process.ts';
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

describe('MCP conformance of mandate-agent mcp --http', { timeout: 240_000 }, () => {
  let server: ServerProcess;
  let root = '';
  let proxy: BearerProxy;
  let mcp: McpHttpProcess;

  before(async () => {
    conformanceNode(); // fails at once, saying to run `npm run test:setup`, when there is no Node 22
    root = mkdtempSync(join(tmpdir(), 'mandate-mcp-conformance-'));
    server = await startServer({ name: 'conformance service' });
    const owner = await HttpOwner.signUp(server, server.baseUrl);
    const { dir } = await pairedAgentDir(server, owner, root, 'Conformance bot');
    const token = mcpToken();
    // The proxy's port comes first, for --allowed-host; its target port is known once the server runs.
    let target = '';
    proxy = await startBearerProxy(() => target, token);
    mcp = await startMcpHttp(dir, token, ['--allowed-host', proxy.host]);
    target = mcp.url;
  });

  after(async () => {
    await mcp?.child.stop();
    await proxy?.close();
    await server?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('without the proxy, the suite\'s requests (no token) are refused', async () => {
    const res = await fetch(mcp.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }) });
    assert.equal(res.status, 401);
  });

  for (const scenario of SCENARIOS) {
    it(`${scenario} passes`, async () => {
      const before = proxy.forwarded();
      const run = await runScenario(`${proxy.url}/mcp`, scenario);
      const shown = `${run.output}\n--- mandate-agent mcp\n${mcp.child.output()}`;
      assert.deepEqual(problems(run), [], shown);
      assert.ok(run.checks.some((c) => c.status === 'SUCCESS'), `no check passed:\n${shown}`);
      assert.equal(run.exitCode, 0, shown);
      assert.ok(proxy.forwarded() > before, 'the suite went through the proxy to the server');
    });
  }
});
