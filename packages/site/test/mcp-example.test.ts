import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { discoverOAuthProtectedResourceMetadata, extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { detailsDigestOf } from '@mandate/protocol';
import { type Child, runTs } from '../../server/test/helpers/child-process.ts';
import { freePort } from '../../server/test/helpers/server-process.ts';
import { CALL_AGAIN } from '../src/index.ts';
import { passFetch } from './helpers/mcp-stand-in.ts';
import { type RealMandate, ownerAnswers, pendingSiteStepups, realApp, realPass, startRealMandate } from './helpers/mcp-real.ts';

// examples/mcp-server as its own process (node:http and Express, cloud and local mode), started as
// its README says, against a real Mandate over real HTTP; this test is the MCP client (the official
// SDK's Client with a fetch that presents the pass) and the owner (passkey approvals).

const textOf = (r: CallToolResult): string => (r.content[0] as { text: string }).text;

type Example = { base: string; resource: string; child: Child };

async function startExample(m: RealMandate, file: string, mode: 'cloud' | 'local'): Promise<Example> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = runTs(`examples/mcp-server/${file}`, { env: { MANDATE_URL: m.url, MODE: mode, PORT: String(port), PUBLIC_URL: base, APPROVAL_WAIT_SEC: '2' } });
  await child.waitFor('listening on', 60_000);
  return { base, resource: `${base}/mcp`, child };
}

async function connect(ex: Example, fetchImpl: typeof fetch): Promise<Client> {
  const client = new Client({ name: 'mcp-example-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(ex.resource), { fetch: fetchImpl }));
  return client;
}

/** A JSON-RPC POST as MCP clients send it. */
function rpc(ex: Example, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(ex.resource, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
}

const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };
const deleteCall = (title: string) => ({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'delete_note', arguments: { title } } });

describe('examples/mcp-server against a real Mandate', () => {
  let m: RealMandate;
  before(async () => {
    m = await startRealMandate();
  });
  after(() => m.close());

  for (const [file, mode] of [['server.ts', 'cloud'], ['server.ts', 'local'], ['express.ts', 'cloud'], ['express.ts', 'local']] as const) {
    describe(`${file}, ${mode} mode`, () => {
      let ex: Example;
      before(async () => {
        ex = await startExample(m, file, mode);
      });
      after(async () => {
        assert.equal(await ex.child.stop(), 0, 'exits with 0 on SIGTERM');
      });

      it('prints where it listens and its resource; serves RFC 9728 metadata naming Mandate', async () => {
        const kind = file === 'server.ts' ? 'node:http' : 'Express';
        assert.ok(ex.child.stdout().includes(`notes MCP server (${kind}) listening on ${ex.base}: resource ${ex.resource}, ${mode} mode, Mandate at ${m.url}\n`), ex.child.output());
        const res = await fetch(`${ex.base}/.well-known/oauth-protected-resource/mcp`);
        assert.equal(res.status, 200);
        assert.deepEqual(await res.json(), {
          resource: ex.resource,
          authorization_servers: [m.url],
          scopes_supported: ['notes:read', 'notes:write'],
          bearer_methods_supported: ['header'],
          dpop_signing_alg_values_supported: ['ES256'],
          resource_name: new URL(ex.base).host,
        });
        assert.deepEqual(await (await fetch(`${ex.base}/healthz`)).json(), { mode, ready: true, resource: ex.resource, pendingApprovals: 0 });
      });

      it('without a pass: 401 with the resource_metadata challenge, which the MCP SDK follows to Mandate', async () => {
        const res = await rpc(ex, INITIALIZE);
        assert.equal(res.status, 401);
        const www = res.headers.get('www-authenticate') ?? '';
        assert.equal(www, `Bearer error_description="this MCP server needs a Mandate pass: see resource_metadata", scope="notes:read", resource_metadata="${ex.base}/.well-known/oauth-protected-resource/mcp", DPoP algs="ES256"`);
        // What an MCP client does with it (the SDK's own discovery): the metadata names Mandate.
        const params = extractWWWAuthenticateParams(res);
        assert.equal(params.resourceMetadataUrl?.href, `${ex.base}/.well-known/oauth-protected-resource/mcp`);
        assert.equal(params.scope, 'notes:read');
        const metadata = await discoverOAuthProtectedResourceMetadata(ex.resource, { resourceMetadataUrl: params.resourceMetadataUrl });
        assert.deepEqual(metadata.authorization_servers, [m.url]);
        // And a path that is not the server's: 404, not a challenge.
        assert.equal((await fetch(`${ex.base}/elsewhere`)).status, 404);
      });

      it('a bearer pass with notes:read: the SDK client lists the tools and calls list_notes; delete_note is 403 insufficient_scope', async () => {
        const app = await realApp(m, ex.resource, ['notes:read']);
        const pass = await realPass(m, app, { bound: false });
        const client = await connect(ex, passFetch(pass, { bound: false }));
        try {
          const { tools } = await client.listTools();
          assert.deepEqual(tools.map((t) => t.name).sort(), ['delete_note', 'list_notes']);
          const notes = JSON.parse(textOf((await client.callTool({ name: 'list_notes', arguments: {} })) as CallToolResult)) as { title: string }[];
          assert.deepEqual(notes.map((n) => n.title), ['Shopping list', 'Trip to Lisbon', 'Book club']);
        } finally {
          await client.close();
        }
        const res = await rpc(ex, deleteCall('Book club'), { authorization: `Bearer ${pass}` });
        assert.equal(res.status, 403);
        assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer error="insufficient_scope", error_description="[^"]+", scope="notes:write", resource_metadata="[^"]+"/);
        assert.deepEqual(await pendingSiteStepups(m), [], 'the owner is not asked for a call the pass may not make');
      });

      it('delete_note: progress then "call again"; the owner approves that very call with the passkey; the call again runs once', async () => {
        const app = await realApp(m, ex.resource, ['notes:read', 'notes:write']);
        const pass = await realPass(m, app, { bound: true });
        const client = await connect(ex, passFetch(pass, { bound: true, signer: app }));
        try {
          const progress: string[] = [];
          const call = async (name: string, args: Record<string, unknown>) =>
            (await client.callTool({ name, arguments: args }, undefined, { timeout: 20_000, onprogress: (p) => void progress.push(p.message ?? '') })) as CallToolResult;

          const first = await call('delete_note', { title: 'Trip to Lisbon' });
          assert.deepEqual([first.isError, textOf(first)], [true, CALL_AGAIN]);
          assert.equal(progress[0], 'Asked the owner on their phone; waiting for their approval');
          const cards = await pendingSiteStepups(m);
          assert.equal(cards.length, 1);
          assert.equal(cards[0]?.action, 'delete_note');
          assert.deepEqual(cards[0]?.details, { summary: 'Delete note Trip to Lisbon', digest: detailsDigestOf({ title: 'Trip to Lisbon' }) });

          await ownerAnswers(m, cards[0]?.id ?? '', true);
          const approved = await call('delete_note', { title: 'Trip to Lisbon' });
          assert.deepEqual([approved.isError, textOf(approved)], [undefined, 'Deleted note Trip to Lisbon']);
          const left = JSON.parse(textOf(await call('list_notes', {}))) as { title: string }[];
          assert.deepEqual(left.map((n) => n.title), ['Shopping list', 'Book club']);

          // Once: the same call now finds no note (and asks nobody); another note is another card, which the owner denies.
          const gone = await call('delete_note', { title: 'Trip to Lisbon' });
          assert.deepEqual([gone.isError, textOf(gone)], [true, 'There is no note Trip to Lisbon']);
          assert.deepEqual(await pendingSiteStepups(m), []);
          assert.equal(textOf(await call('delete_note', { title: 'Book club' })), CALL_AGAIN);
          const other = await pendingSiteStepups(m);
          assert.deepEqual(other.map((c) => c.details?.summary), ['Delete note Book club']);
          await ownerAnswers(m, other[0]?.id ?? '', false);
          const denied = await call('delete_note', { title: 'Book club' });
          assert.equal(denied.isError, true);
          assert.match(textOf(denied), /denied/);
          assert.equal(JSON.parse(textOf(await call('list_notes', {}))).length, 2);
        } finally {
          await client.close();
        }
      });
    });
  }
});
