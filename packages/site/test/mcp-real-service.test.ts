import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { detailsDigestOf } from '@mandate/protocol';
import { CALL_AGAIN, type Mode } from '../src/index.ts';
import { passFetch } from './helpers/mcp-stand-in.ts';
import { type McpApp, TOOLS, connectClient, rpc, startMcpApp, toolCall } from './helpers/mcp-servers.ts';
import { type RealApp, type RealMandate, ownerAnswers, pendingSiteStepups, realApp, realPass, startRealMandate } from './helpers/mcp-real.ts';
import { quiet } from './helpers/mandate.ts';

// mcpAuth against a real Mandate (SQLite, real HTTP): passes from /oidc/token for the MCP server's
// resource, bound and bearer, in cloud mode (Mandate's verify with `resource`) and local mode (its
// keys and revocation list); the owner's revocation; and withApproval through the real site step-up,
// approved with the owner's passkey (the server tests' software authenticator) and used up at
// stepup/verify with site = the resource.

const textOf = (r: unknown): string => ((r as CallToolResult).content[0] as { text: string }).text;

for (const mode of ['cloud', 'local'] as Mode[]) {
  describe(`mcpAuth against a real Mandate, ${mode} mode`, () => {
    let m: RealMandate;
    let app: McpApp;

    before(async () => {
      m = await startRealMandate();
      app = await startMcpApp(mode === 'cloud' ? 'express' : 'node', (resource) => ({
        service: m.url,
        resource,
        scopes: ['notes:read'],
        tools: TOOLS,
        mode,
        approvalWaitSec: 2,
        approvalPollSec: 1,
        onError: quiet,
      }));
      if (mode === 'local') await app.mandate.start();
    });
    after(async () => {
      app.mandate.close();
      await app.close();
      await m.close();
    });

    it('a DPoP-bound pass from /oidc/token reaches the tool as extra.authInfo; the same pass as a bearer one is refused', async () => {
      const a = await realApp(m, app.resource, ['notes:read']);
      const pass = await realPass(m, a, { bound: true });
      const client = await connectClient(app, passFetch(pass, { bound: true, signer: a }));
      try {
        const who = JSON.parse(textOf(await client.callTool({ name: 'whoami', arguments: {} }))) as { clientId: string; scopes: string[]; resource: string; extra: Record<string, unknown> };
        assert.equal(who.clientId, a.clientId);
        assert.deepEqual(who.scopes, ['notes:read']);
        assert.equal(who.resource, app.resource);
        assert.equal(who.extra['agentId'], a.id);
        assert.equal(who.extra['userId'], m.owner.user.id);
        assert.equal(who.extra['grantId'], a.grantId);
        assert.equal(who.extra['bound'], true);
        if (mode === 'cloud') assert.equal(who.extra['agentName'], 'Notes client');
      } finally {
        await client.close();
      }
      const asBearer = await rpc(app, toolCall('read_notes'), { authorization: `Bearer ${pass}` });
      assert.equal(asBearer.status, 401);
      assert.match(asBearer.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
    });

    it('a bearer pass is accepted; its scopes decide the tools (403 insufficient_scope)', async () => {
      const a = await realApp(m, app.resource, ['notes:read']);
      const pass = await realPass(m, a, { bound: false });
      const client = await connectClient(app, passFetch(pass, { bound: false }));
      try {
        assert.equal(textOf(await client.callTool({ name: 'read_notes', arguments: {} })), 'note 1, note 2');
      } finally {
        await client.close();
      }
      const res = await rpc(app, toolCall('write_note', { text: 'x' }), { authorization: `Bearer ${pass}` });
      assert.equal(res.status, 403);
      const www = res.headers.get('www-authenticate') ?? '';
      assert.match(www, /^Bearer error="insufficient_scope"/);
      assert.ok(www.includes('scope="notes:read notes:write"'), www);
    });

    it('a pass for another resource is refused', async () => {
      const a = await realApp(m, `${app.url}/elsewhere`, ['notes:read']);
      const pass = await realPass(m, a, { bound: false });
      const res = await rpc(app, toolCall('read_notes'), { authorization: `Bearer ${pass}` });
      assert.equal(res.status, 401);
      assert.equal(((await res.json()) as { error: string }).error, 'wrong_site');
    });

    it('withApproval: pending, call again, the owner approves with their passkey, the call runs once; denied', async () => {
      const a = await realApp(m, app.resource, ['notes:read', 'notes:write']);
      const pass = await realPass(m, a, { bound: true });
      const client: Client = await connectClient(app, passFetch(pass, { bound: true, signer: a }));
      try {
        const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args }, undefined, { timeout: 20_000 })) as CallToolResult;
        const first = await call('delete_note', { id: '7' });
        assert.equal(textOf(first), CALL_AGAIN);
        const cards = await pendingSiteStepups(m);
        assert.equal(cards.length, 1);
        const card = cards[0];
        assert.ok(card !== undefined);
        assert.equal(card.action, 'delete_note');
        assert.deepEqual(card.details, { summary: 'Delete the note 7', digest: detailsDigestOf({ id: '7' }) });

        await ownerAnswers(m, card.id, true);
        const approved = await call('delete_note', { id: '7' });
        assert.equal(textOf(approved), 'deleted 7');
        assert.deepEqual(app.ran, [{ id: '7' }]);

        // Used once: the same call asks anew (a second card); the owner denies it.
        assert.equal(textOf(await call('delete_note', { id: '7' })), CALL_AGAIN);
        const again = await pendingSiteStepups(m);
        assert.equal(again.length, 1);
        assert.notEqual(again[0]?.id, card.id);
        await ownerAnswers(m, again[0]?.id ?? '', false);
        const denied = await call('delete_note', { id: '7' });
        assert.equal(denied.isError, true);
        assert.match(textOf(denied), /denied/);
        assert.deepEqual(app.ran, [{ id: '7' }]);
      } finally {
        await client.close();
      }
    });

    it('the owner revokes the access: the pass is refused (cloud: at once; local: with the next revocation list)', async () => {
      const a = await realApp(m, app.resource, ['notes:read']);
      const pass = await realPass(m, a, { bound: false });
      const before = await rpc(app, toolCall('read_notes'), { authorization: `Bearer ${pass}` });
      assert.equal(before.status, 200);
      await before.text();
      const revoked = await m.app.inject({ method: 'POST', url: `/api/grants/${a.grantId}/revoke`, headers: m.owner.auth });
      assert.equal(revoked.statusCode, 200, revoked.body);
      if (mode === 'local') await app.mandate.refresh();
      const res = await rpc(app, toolCall('read_notes'), { authorization: `Bearer ${pass}` });
      assert.equal(res.status, 401);
      assert.match(res.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
      assert.equal(((await res.json()) as { error: string }).error, 'grant_revoked');
    });
  });
}
