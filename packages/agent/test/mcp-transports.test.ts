import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { Child } from '../../server/test/helpers/child-process.ts';
import { runNode } from '../../server/test/helpers/child-process.ts';
import { HttpOwner } from '../../server/test/helpers/over-http.ts';
import { freePort, startServer, type ServerProcess } from '../../server/test/helpers/server-process.ts';
import { agentDir, BIN, httpServer, httpSession, stdioSession, structured, text, type AgentDir } from './helpers/mcp-host.ts';

// `mandate-agent mcp` over its two transports, with the official SDK Client as the host, against a
// real service: stdio by default; --http refuses to start without a token of 32+ characters, and
// checks every request's Host, Origin and bearer token before MCP sees it.

type Raw = { status: number; body: string; headers: Record<string, string | string[] | undefined> };

/** A request with exactly these headers (fetch would not let a test set Host). */
function raw(port: number, headers: Record<string, string>, path = '/mcp'): Promise<Raw> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } }, (res) => {
      let data = '';
      res.on('data', (d: Buffer) => (data += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('mandate-agent mcp: stdio and streamable HTTP', { timeout: 180_000 }, () => {
  let server: ServerProcess;
  let owner: HttpOwner;
  let agent: AgentDir;

  before(async () => {
    server = await startServer({ name: 'mcp transports server' });
    owner = await HttpOwner.signUp(server, server.baseUrl);
    agent = await agentDir(server, owner, 'Transport bot');
  });

  after(async () => {
    await server?.stop();
    agent?.remove();
  });

  it('serves the tools over stdio, with nothing but MCP on stdout', async () => {
    const s = await stdioSession(agent.dir);
    try {
      const { tools } = await s.client.listTools();
      assert.ok(tools.some((t) => t.name === 'mandate_status'));
      const r = await s.call('mandate_status');
      assert.equal(r.isError, undefined, text(r));
      assert.equal(structured(r)['agent_id'], agent.agentId);
      assert.equal(structured(r)['name'], 'Transport bot');
      assert.equal(structured(r)['flag'], 'ok');
      assert.deepEqual(structured(r)['sites'], []);
      assert.match(text(r), /Transport bot/);
      assert.match(s.log(), /serving MCP on stdio/);
    } finally {
      await s.close();
    }
  });

  it('refuses to start --http without MANDATE_MCP_TOKEN, or with a short one', async () => {
    for (const token of [undefined, 'x'.repeat(31)]) {
      const child = runNode('mcp without token', [BIN, 'mcp', '--http', '--port', '0', '--dir', agent.dir], { env: token === undefined ? { MANDATE_MCP_TOKEN: '' } : { MANDATE_MCP_TOKEN: token } });
      assert.equal(await child.exited, 2);
      assert.match(child.stderr(), /MANDATE_MCP_TOKEN/);
      assert.match(child.stderr(), /32/);
    }
  });

  describe('--http', () => {
    const token = randomBytes(24).toString('hex');
    let port = 0;
    let child: Child;

    before(async () => {
      port = await freePort();
      child = await httpServer(agent.dir, port, token, ['--allowed-host', 'mcp.example.test']);
    });
    after(async () => {
      await child?.stop();
    });

    it('serves a host that sends the bearer token', async () => {
      const s = await httpSession(`http://127.0.0.1:${port}/mcp`, token, () => child.output());
      try {
        const r = await s.call('mandate_status');
        assert.equal(structured(r)['agent_id'], agent.agentId);
      } finally {
        await s.close();
      }
      // localhost names the loopback listen address too.
      const s2 = await httpSession(`http://localhost:${port}/mcp`, token);
      await s2.close();
    });

    it('answers 401 without the token or with a wrong one', async () => {
      for (const auth of [{} as Record<string, string>, { authorization: `Bearer ${token}x` }, { authorization: `Basic ${token}` }, { authorization: 'Bearer ' }]) {
        const r = await raw(port, { host: `127.0.0.1:${port}`, ...auth });
        assert.equal(r.status, 401, JSON.stringify(auth));
        assert.equal(r.headers['www-authenticate'], 'Bearer');
        assert.equal(JSON.parse(r.body).error, 'invalid_token');
      }
    });

    it('answers 403 to a Host or Origin that is neither the listen address nor an --allowed-host', async () => {
      const auth = { authorization: `Bearer ${token}` };
      const badHost = await raw(port, { ...auth, host: `evil.example:${port}` });
      assert.equal(badHost.status, 403);
      assert.equal(JSON.parse(badHost.body).error, 'host_not_allowed');
      for (const origin of ['http://evil.example', 'null', `http://evil.example:${port}`]) {
        const r = await raw(port, { ...auth, host: `127.0.0.1:${port}`, origin });
        assert.equal(r.status, 403, origin);
        assert.equal(JSON.parse(r.body).error, 'origin_not_allowed');
      }
      // The allowed names pass (and then need a valid MCP exchange, which this initialize is).
      for (const h of [{ host: `mcp.example.test:${port}` } as Record<string, string>, { host: `127.0.0.1:${port}`, origin: `http://localhost:${port}` }, { host: `127.0.0.1:${port}`, origin: 'https://mcp.example.test' }]) {
        const r = await raw(port, { ...auth, ...h });
        assert.equal(r.status, 200, JSON.stringify(h));
      }
    });

    it('answers other paths 404, bad JSON 400, and requests of an unknown session 404', async () => {
      const auth = { authorization: `Bearer ${token}`, host: `127.0.0.1:${port}` };
      assert.equal((await raw(port, auth, '/other')).status, 404);
      assert.equal((await raw(port, { ...auth, 'mcp-session-id': 'nope' })).status, 404);
      const bad = await new Promise<number>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path: '/mcp', method: 'POST', headers: { ...auth, 'content-type': 'application/json' } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end('{not json');
      });
      assert.equal(bad, 400);
      assert.ok(child.running(), 'the server keeps running');
    });
  });
});
