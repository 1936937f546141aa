import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { mcpAuth } from '../src/index.ts';
import { type App, type StandIn, newApp, passFor, startStandIn } from './helpers/mcp-stand-in.ts';
import { FRAMEWORKS, type McpApp, TOOLS, rpc, startMcpApp, toolCall } from './helpers/mcp-servers.ts';
import { quiet } from './helpers/mandate.ts';

// Bad input of any shape gets a 4xx with a clear message, never a 5xx, never the pass in the answer:
// malformed and oversized bodies, bodies that are JSON but not JSON-RPC, odd Authorization and DPoP
// headers, odd targets. And options no server could run with throw at start-up.

/** A raw request, for what fetch will not send (odd targets, bytes that are not UTF-8). */
function raw(url: string, o: { method: string; path: string; headers?: Record<string, string>; body?: Buffer }): Promise<{ status: number; body: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: u.hostname, port: u.port, method: o.method, path: o.path, headers: o.headers }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end(o.body);
  });
}

const VARIANTS = [...FRAMEWORKS.map((f) => ({ framework: f, expressJson: true })), { framework: 'express' as const, expressJson: false }];

for (const { framework, expressJson } of VARIANTS) {
  describe(`mcpAuth bad input, ${framework}${expressJson ? '' : ' without express.json()'}`, () => {
    let s: StandIn;
    let app: McpApp;
    let notesApp: App;
    let pass: string;

    before(async () => {
      s = await startStandIn();
      notesApp = await newApp();
      app = await startMcpApp(framework, (resource) => ({ service: s.url, resource, scopes: ['notes:read'], tools: TOOLS, mode: 'local', onError: quiet }), { expressJson });
      await app.mandate.start();
      pass = await passFor(s, notesApp, { resource: app.resource, scopes: ['notes:read'], bound: false });
    });
    after(async () => {
      app.mandate.close();
      await app.close();
      await s.close();
    });

    const is4xx = (status: number, what: string) => assert.ok(status >= 400 && status < 500, `${what}: ${status}`);

    it('malformed JSON, bytes that are not UTF-8, and a body over 1 MiB: 4xx', async () => {
      const auth = { authorization: `Bearer ${pass}` };
      const malformed = await rpc(app, '{"jsonrpc": "2.0", "method": ', auth);
      assert.equal(malformed.status, 400);
      await malformed.text();
      const bytes = await raw(app.url, { method: 'POST', path: '/mcp', headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: Buffer.from([0x7b, 0xff, 0xfe, 0x7d]) });
      assert.equal(bytes.status, 400);
      const huge = await rpc(app, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'read_notes', arguments: { x: 'a'.repeat(2 * 1024 * 1024) } } }), auth);
      assert.equal(huge.status, 413);
      await huge.text();
    });

    it('JSON that is not JSON-RPC, and tools/call with odd params: 4xx from the guard or the transport', async () => {
      const auth = { authorization: `Bearer ${pass}` };
      const bodies: unknown[] = [
        'null',
        '"text"',
        '42',
        '[]',
        '{}',
        { jsonrpc: '2.0', id: 1, method: 'tools/call' },
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: null },
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 42 } },
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: { toString: 1 } } },
        [null, 1, 'x', { method: 'tools/call', params: { name: '__proto__' } }],
      ];
      for (const body of bodies) {
        const res = await rpc(app, body, auth);
        const text = await res.text();
        assert.ok(res.status < 500, `${JSON.stringify(body)}: ${res.status} ${text}`);
      }
    });

    it('a body that is JSON under another content type is still checked for scopes before the transport sees it', async () => {
      const res = await fetch(app.resource, {
        method: 'POST',
        headers: { authorization: `Bearer ${pass}`, 'content-type': 'text/plain', accept: 'application/json, text/event-stream' },
        body: JSON.stringify(toolCall('write_note', { text: 'x' })),
      });
      // node:http and Express read it here (the pass lacks notes:write); Fastify refuses the content type itself.
      assert.equal(res.status, framework === 'fastify' ? 415 : 403);
      await res.text();
    });

    it('odd Authorization headers: the bare challenge, or 401 invalid_token; never the token echoed', async () => {
      const cases: [string, number, string | undefined][] = [
        ['Bearer', 401, undefined],
        ['Bearer ', 401, undefined],
        ['Basic dXNlcjpwYXNz', 401, undefined],
        ['Bearer a b', 401, undefined],
        ['Bearer "quoted"', 401, 'invalid_token'],
        ['Bearer abc.def.ghi', 401, 'invalid_token'],
        [`Bearer ${'A'.repeat(15_000)}`, 401, 'invalid_token'],
        [`DPoP ${pass}`, 401, 'invalid_token'],
        [`bearer ${pass}x`, 401, 'invalid_token'],
      ];
      for (const [authorization, status, error] of cases) {
        const res = await rpc(app, toolCall('read_notes'), { authorization });
        const text = await res.text();
        assert.equal(res.status, status, authorization.slice(0, 40));
        const www = res.headers.get('www-authenticate') ?? '';
        assert.ok(www.includes('resource_metadata='), www);
        if (error === undefined) assert.doesNotMatch(www, /error=/);
        else assert.ok(www.includes(`error="${error}"`), www);
        assert.ok(!text.includes(pass) && !www.includes(pass));
      }
    });

    it('odd DPoP headers and targets: 4xx', async () => {
      const dpops = ['x', 'a.b.c', 'é', 'A'.repeat(15_000)];
      for (const dpop of dpops) {
        const res = await rpc(app, toolCall('read_notes'), { authorization: `Bearer ${pass}`, dpop });
        await res.text();
        // A bearer pass does not read a DPoP header: it is accepted; a wrong one costs nothing.
        assert.ok(res.status === 200 || (res.status >= 400 && res.status < 500), `${dpop.slice(0, 10)}: ${res.status}`);
      }
      const bound = await passFor(s, notesApp, { resource: app.resource, scopes: ['notes:read'], bound: true });
      for (const dpop of dpops) {
        const res = await rpc(app, toolCall('read_notes'), { authorization: `DPoP ${bound}`, dpop });
        await res.text();
        assert.equal(res.status, 401, dpop.slice(0, 10));
      }
      for (const path of ['/mcp?x=%ff', '/mcp/../mcp', '//mcp', '/.well-known/oauth-protected-resource/mcp?x=1']) {
        const res = await raw(app.url, { method: 'POST', path, headers: { 'content-type': 'application/json' }, body: Buffer.from('{}') });
        is4xx(res.status, path);
      }
      const head = await raw(app.url, { method: 'HEAD', path: '/.well-known/oauth-protected-resource/mcp' });
      assert.equal(head.status, 200);
      assert.equal(head.body, '');
    });
  });
}

describe('mcpAuth when Mandate gives no verdict', () => {
  let s: StandIn;
  before(async () => {
    s = await startStandIn();
  });
  after(() => s.close());

  it('cloud mode, verify failing: 503 service_unavailable with Retry-After, and onError hears of it', async () => {
    const errors: Error[] = [];
    const app = await startMcpApp('node', (resource) => ({ service: s.url, resource, scopes: ['notes:read'], mode: 'cloud', onError: (e) => errors.push(e) }));
    try {
      const pass = await passFor(s, await newApp(), { resource: app.resource, scopes: ['notes:read'], bound: false });
      s.overrides.set('POST /api/v1/verify', { status: 500, body: { detail: 'down' } });
      const res = await rpc(app, toolCall('read_notes'), { authorization: `Bearer ${pass}` });
      assert.equal(res.status, 503);
      assert.equal(res.headers.get('retry-after'), '5');
      const body = (await res.json()) as { error: string };
      assert.equal(body.error, 'service_unavailable');
      assert.ok(!JSON.stringify(body).includes(pass));
      assert.equal(errors.length, 1);
      assert.ok(!errors[0]?.message.includes(pass));
    } finally {
      s.overrides.clear();
      await app.close();
    }
  });

  it('local mode, no revocation list: 503 revocation_stale (fail closed), then served once one is fetched', async () => {
    s.overrides.set('GET /api/v1/revocation', { status: 500 });
    const app = await startMcpApp('node', (resource) => ({ service: s.url, resource, scopes: ['notes:read'], mode: 'local', onError: quiet }));
    try {
      await assert.rejects(app.mandate.start());
      assert.equal(app.mandate.status().ready, false);
      const pass = await passFor(s, await newApp(), { resource: app.resource, scopes: ['notes:read'], bound: false });
      const res = await rpc(app, toolCall('read_notes'), { authorization: `Bearer ${pass}` });
      assert.equal(res.status, 503);
      assert.equal(((await res.json()) as { error: string }).error, 'revocation_stale');
      s.overrides.clear();
      await app.mandate.refresh();
      assert.equal(app.mandate.status().ready, true);
      const ok = await rpc(app, toolCall('read_notes'), { authorization: `Bearer ${pass}` });
      assert.equal(ok.status, 200);
      await ok.text();
    } finally {
      s.overrides.clear();
      app.mandate.close();
      await app.close();
    }
  });
});

describe('mcpAuth options', () => {
  const ok = { service: 'https://mandate.example', resource: 'https://mcp.example/mcp', scopes: ['notes:read'] };

  it('normalises the resource as clients send it, and defaults the name and mode', () => {
    const m = mcpAuth({ ...ok, resource: 'https://MCP.example' });
    assert.equal(m.resource, 'https://mcp.example/');
    assert.equal(m.mode, 'cloud');
    assert.deepEqual(m.metadataPaths, ['/.well-known/oauth-protected-resource']);
    assert.equal(m.metadataUrl, 'https://mcp.example/.well-known/oauth-protected-resource');
    assert.equal(m.metadata.resource_name, 'mcp.example');
  });

  it('throws for options no server could run with', () => {
    const bad: [string, Record<string, unknown>][] = [
      ['no resource', { resource: undefined }],
      ['not a URL', { resource: 'mcp.example/mcp' }],
      ['a fragment', { resource: 'https://mcp.example/mcp#x' }],
      ['an empty fragment', { resource: 'https://mcp.example/mcp#' }],
      ['a query', { resource: 'https://mcp.example/mcp?x=1' }],
      ['ftp', { resource: 'ftp://mcp.example/mcp' }],
      ['no service', { service: undefined }],
      ['scopes not a list', { scopes: 'notes:read' }],
      ['a bad scope', { scopes: ['notes read'] }],
      ['a bad tool scope', { tools: { t: { scopes: ['ÿ'] } } }],
      ['an approval tool named with a control character', { tools: { 'a\u0007': { approval: true } } }],
      ['a summary that is not a function', { tools: { t: { summary: 'x' } } }],
      ['a bad mode', { mode: 'edge' }],
      ['approvalWaitSec over 25', { approvalWaitSec: 30 }],
      ['approvalPollSec 0', { approvalPollSec: 0 }],
      ['an empty resourceName', { resourceName: ' ' }],
    ];
    for (const [what, over] of bad) {
      assert.throws(() => mcpAuth({ ...ok, ...over } as never), TypeError, what);
    }
  });

  it('withApproval refuses a tool name that cannot be an action', () => {
    const m = mcpAuth(ok);
    assert.throws(() => m.withApproval('', async () => ({ content: [] })), TypeError);
    assert.throws(() => m.withApproval('x'.repeat(201), async () => ({ content: [] })), TypeError);
  });
});
