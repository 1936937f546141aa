import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createDpopProof } from '@mandate/protocol';
import { discoverOAuthProtectedResourceMetadata, extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import type { Mode } from '../src/index.ts';
import { type App, type StandIn, newApp, passFetch, passFor, startStandIn } from './helpers/mcp-stand-in.ts';
import { FRAMEWORKS, type McpApp, TOOLS, connectClient, rpc, startMcpApp, toolCall } from './helpers/mcp-servers.ts';
import { quiet } from './helpers/mandate.ts';

// mcpAuth in node:http, Express and Fastify, in local mode (keys and revocation list from the
// stand-in) and cloud mode (the stand-in's verify, with the protocol's verifyResourceRequest): the
// metadata, the challenges, bound and bearer passes, other resources, revocation, scopes, and
// req.auth reaching a real MCP SDK McpServer tool through StreamableHTTPServerTransport.

const textOf = (r: unknown): string => ((r as CallToolResult).content[0] as { text: string }).text;

for (const mode of ['local', 'cloud'] as Mode[]) {
  for (const framework of FRAMEWORKS) {
    describe(`mcpAuth, ${framework}, ${mode} mode`, () => {
      let s: StandIn;
      let app: McpApp;
      let notesApp: App;

      before(async () => {
        s = await startStandIn();
        notesApp = await newApp();
        app = await startMcpApp(framework, (resource) => ({ service: s.url, resource, scopes: ['notes:read'], tools: TOOLS, mode, onError: quiet }));
        if (mode === 'local') await app.mandate.start();
      });
      after(async () => {
        app.mandate.close();
        await app.close();
        await s.close();
      });

      it('serves RFC 9728 metadata at the well-known path plus the resource path, and the bare one', async () => {
        const expected = {
          resource: app.resource,
          authorization_servers: [s.url],
          scopes_supported: ['notes:read', 'notes:write'],
          bearer_methods_supported: ['header'],
          dpop_signing_alg_values_supported: ['ES256'],
          resource_name: new URL(app.url).host,
        };
        for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
          const res = await fetch(app.url + path);
          assert.equal(res.status, 200, path);
          assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
          assert.deepEqual(await res.json(), expected);
        }
        assert.deepEqual(app.mandate.metadataPaths, ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']);
      });

      it('answers a request without a pass 401 with the challenge naming the metadata and the scopes', async () => {
        const res = await rpc(app, toolCall('read_notes'));
        assert.equal(res.status, 401);
        const www = res.headers.get('www-authenticate') ?? '';
        assert.match(www, /^Bearer /);
        assert.ok(www.includes(`resource_metadata="${app.url}/.well-known/oauth-protected-resource/mcp"`), www);
        assert.ok(www.includes('scope="notes:read"'), www);
        assert.doesNotMatch(www, /error=/);
        assert.match(www, /DPoP algs="ES256"/);
      });

      it("the MCP SDK client's own discovery reads the challenges and the metadata", async () => {
        const unauthorized = await rpc(app, toolCall('read_notes'));
        const params = extractWWWAuthenticateParams(unauthorized);
        assert.equal(params.resourceMetadataUrl?.href, `${app.url}/.well-known/oauth-protected-resource/mcp`);
        assert.equal(params.scope, 'notes:read');
        const found = await discoverOAuthProtectedResourceMetadata(app.resource, { resourceMetadataUrl: params.resourceMetadataUrl });
        assert.equal(found.resource, app.resource);
        assert.deepEqual(found.authorization_servers, [s.url]);
        // Without the header's hint the SDK tries the path-aware well-known URL first: the same document.
        assert.equal((await discoverOAuthProtectedResourceMetadata(app.resource)).resource, app.resource);

        const pass = await passFor(s, notesApp, { resource: app.resource, scopes: ['notes:read'], bound: false });
        const forbidden = await rpc(app, toolCall('write_note', { text: 'x' }), { authorization: `Bearer ${pass}` });
        const stepUp = extractWWWAuthenticateParams(forbidden);
        // The scopes held and the one needed: a client that replaces its scope with the challenge's keeps read.
        assert.deepEqual([forbidden.status, stepUp.error, stepUp.scope], [403, 'insufficient_scope', 'notes:read notes:write']);
      });

      it('accepts a DPoP-bound pass with its proof, and hands req.auth to the McpServer tool as extra.authInfo', async () => {
        const pass = await passFor(s, notesApp, { resource: app.resource, scopes: ['notes:read'], bound: true });
        const client = await connectClient(app, passFetch(pass, { bound: true, signer: notesApp }));
        try {
          const who = JSON.parse(textOf(await client.callTool({ name: 'whoami', arguments: {} }))) as Record<string, unknown>;
          assert.equal(who['token'], pass);
          assert.equal(who['clientId'], notesApp.clientId);
          assert.deepEqual(who['scopes'], ['notes:read']);
          assert.equal(who['resource'], app.resource);
          assert.equal(typeof who['expiresAt'], 'number');
          const extra = who['extra'] as Record<string, unknown>;
          assert.equal(extra['agentId'], notesApp.id);
          assert.equal(extra['userId'], notesApp.userId);
          assert.equal(extra['grantId'], notesApp.grantId);
          assert.equal(extra['bound'], true);
          if (mode === 'cloud') assert.equal(extra['agentName'], 'Notes app');
          assert.equal(textOf(await client.callTool({ name: 'read_notes', arguments: {} })), 'note 1, note 2');
        } finally {
          await client.close();
        }
      });

      it('accepts a bearer pass (no cnf) sent with the Bearer scheme', async () => {
        const pass = await passFor(s, notesApp, { resource: app.resource, scopes: ['notes:read', 'notes:write'], bound: false });
        const client = await connectClient(app, passFetch(pass, { bound: false }));
        try {
          const who = JSON.parse(textOf(await client.callTool({ name: 'whoami', arguments: {} }))) as { extra: { bound: boolean } };
          assert.equal(who.extra.bound, false);
          assert.equal(textOf(await client.callTool({ name: 'write_note', arguments: { text: 'hi' } })), 'wrote hi');
        } finally {
          await client.close();
        }
      });

      it('refuses a bound pass sent as a bearer one, and a bearer pass sent with the DPoP scheme', async () => {
        const bound = await passFor(s, notesApp, { resource: app.resource, scopes: ['notes:read'], bound: true });
        const res = await rpc(app, toolCall('read_notes'), { authorization: `Bearer ${bound}` });
        assert.equal(res.status, 401);
        assert.match(res.headers.get('www-authenticate') ?? '', /error="invalid_token", error_description="this pass is bound to a DPoP key/);
        const body = (await res.json()) as { error: string };
        assert.equal(body.error, 'invalid_token');
        assert.ok(!JSON.stringify(body).includes(bound));

        const bearer = await passFor(s, notesApp, { resource: app.resource, scopes: ['notes:read'], bound: false });
        const res2 = await rpc(app, toolCall('read_notes'), { authorization: `DPoP ${bearer}` });
        assert.equal(res2.status, 401);
        assert.match(res2.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
      });

      it('refuses a bound pass without its proof, with a proof by another key, and a replayed proof', async () => {
        const pass = await passFor(s, notesApp, { resource: app.resource, scopes: ['notes:read'], bound: true });
        const noProof = await rpc(app, toolCall('read_notes'), { authorization: `DPoP ${pass}` });
        assert.equal(noProof.status, 401);
        assert.equal(((await noProof.json()) as { error: string }).error, 'invalid_dpop');

        const other = await newApp();
        const f = passFetch(pass, { bound: true, signer: other });
        const res = await f(app.resource, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(toolCall('read_notes')) });
        assert.equal(res.status, 401);
        assert.equal(((await res.json()) as { error: string }).error, 'dpop_key_mismatch');

        // The same proof twice: the second is a replay.
        const headers = {
          authorization: `DPoP ${pass}`,
          dpop: await createDpopProof(notesApp.privateKey, notesApp.publicJwk, { htm: 'POST', htu: app.resource, accessToken: pass }),
        };
        const first = await rpc(app, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
        assert.equal(first.status, 202);
        const replay = await rpc(app, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
        assert.equal(replay.status, 401);
        assert.equal(((await replay.json()) as { error: string }).error, 'dpop_replay');
      });

      it('refuses a pass for another resource, and an expired one', async () => {
        const other = await passFor(s, notesApp, { resource: `${app.url}/other-mcp`, scopes: ['notes:read'], bound: false });
        const res = await rpc(app, toolCall('read_notes'), { authorization: `Bearer ${other}` });
        assert.equal(res.status, 401);
        assert.match(res.headers.get('www-authenticate') ?? '', /error="invalid_token", error_description="the access token was issued for another resource"/);
        assert.equal(((await res.json()) as { error: string }).error, 'wrong_site');

        const expired = await passFor(s, notesApp, { resource: app.resource, scopes: ['notes:read'], bound: false, exp: Math.floor(Date.now() / 1000) - 120 });
        const res2 = await rpc(app, toolCall('read_notes'), { authorization: `Bearer ${expired}` });
        assert.equal(res2.status, 401);
        assert.match(res2.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
      });

      it('answers 403 insufficient_scope with the held and needed scopes for a tools/call, also inside a batch', async () => {
        const pass = await passFor(s, notesApp, { resource: app.resource, scopes: ['notes:read'], bound: false });
        const res = await rpc(app, toolCall('write_note', { text: 'x' }), { authorization: `Bearer ${pass}` });
        assert.equal(res.status, 403);
        const www = res.headers.get('www-authenticate') ?? '';
        assert.match(www, /^Bearer error="insufficient_scope"/);
        assert.ok(www.includes('scope="notes:read notes:write"'), www);
        assert.ok(www.includes('error_description="this call needs the scope notes:write"'), www);
        assert.ok(www.includes(`resource_metadata="${app.url}/.well-known/oauth-protected-resource/mcp"`), www);
        assert.equal(((await res.json()) as { error: string }).error, 'insufficient_scope');

        const batch = await rpc(app, [toolCall('read_notes', {}, 1), toolCall('delete_note', { id: '7' }, 2)], { authorization: `Bearer ${pass}` });
        assert.equal(batch.status, 403);
        // Every scope the batch's calls need, held or not: what the client must ask for to make this call.
        assert.ok((batch.headers.get('www-authenticate') ?? '').includes('scope="notes:read notes:write"'));

        // A call the pass's scopes cover goes through to the MCP server.
        const ok = await rpc(app, toolCall('read_notes'), { authorization: `Bearer ${pass}` });
        assert.equal(ok.status, 200);
        await ok.text();
      });

      it('refuses a pass whose access was revoked', async () => {
        const revoked = await newApp();
        const pass = await passFor(s, revoked, { resource: app.resource, scopes: ['notes:read'], bound: false, revSeq: 0 });
        s.revokedGrants.push({ agent: revoked.id, site: app.resource, rev_seq: 1 });
        await app.mandate.refresh(); // local mode: the list is polled; cloud mode: Mandate knows at once
        const res = await rpc(app, toolCall('read_notes'), { authorization: `Bearer ${pass}` });
        assert.equal(res.status, 401);
        assert.match(res.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
        assert.equal(((await res.json()) as { error: string }).error, 'grant_revoked');
      });
    });
  }
}
