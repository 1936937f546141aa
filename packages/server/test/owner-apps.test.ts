import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { detailsDigestOf, generateAgentKeyPair, jwkThumbprint } from '@mandate/protocol';
import { newId } from '../src/domain/ids.ts';
import type { AgentRecord, GrantRecord } from '../src/store/ports/index.ts';
import { createAgent, createGrant, type TestAgent } from './helpers/agents.ts';
import { expectStatus, json, remoteAddress, testApp, type TestApp } from './helpers/app.ts';
import { assertionOptions, type Owner, ownerWithPasskey, respond } from './helpers/approvals.ts';
import { mintPass } from './helpers/passes.ts';

/**
 * What the owner API tells of connected apps (decisions §28), on both stores: the agent list marks
 * them (`kind`, `client_id`, `client_host`, no key), their grants carry `resource`, and a site
 * step-up filed with an app's pass is a pending request with `app` (the card: "<app> (<host>) asks to
 * run <tool> at <resource>") and a notification saying the same. Revoking a resource's grant or the
 * whole app works as for every agent.
 */

const CLIENT_ID = 'https://assistant.example/oauth/client.json';
const RESOURCE = 'https://tools.example/mcp';
const ARGS = { to: 'ACME', amount: '250.00' };
const DETAILS = { summary: 'to: ACME\namount: 250.00 EUR', digest: detailsDigestOf(ARGS) };

interface AgentBody { id: string; name: string; kind: string; client_id: string | null; client_host: string | null; jkt: string | null; status: string }
interface GrantBody { id: string; agent_id: string; site: string; resource: string | null; scopes: string[] }
interface PendingBody { id: string; kind: string; filed_by?: string; action?: string; agent: string; app?: { client_id: string; client_host: string | null; resource: string | null }; details?: unknown }

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`owner API: connected apps (${backend})`, () => {
    let t: TestApp;
    let owner: Owner;
    let agent: TestAgent;
    before(async () => {
      t = await testApp({ backend });
      owner = await ownerWithPasskey(t);
      agent = await createAgent(t, owner, 'Shopper');
      await createGrant(t, agent);
    });
    after(() => t.close());

    /** An app as the browser approval makes it (kind `app`, no key), and its grant for one resource. */
    const connectApp = async (clientId: string, name: string, resource = RESOURCE, scopes = ['tools:read', 'tools:call']): Promise<{ app: AgentRecord; grant: GrantRecord }> => {
      const now = t.clock.now();
      const { app } = await t.services.store.agents.createApp({
        id: newId('ag'), userId: owner.user.id, name, kind: 'app', clientId, publicJwk: null, jkt: null, status: 'active', flag: 'ok',
        flagRevSeq: null, createdAt: now, removedAt: null, unblockedAt: null, unblockedRevSeq: null,
      });
      const grant: GrantRecord = {
        id: newId('gr'), userId: owner.user.id, agentId: app.id, site: new URL(resource).host, resource, scopes, userInfo: [], status: 'active',
        createdAt: now, expiresAt: null, usesLeft: null, refreshHash: null, passesIssued: 0, revokedAt: null, revSeq: null, supersededAt: null,
      };
      await t.services.store.grants.create(grant);
      return { app, grant };
    };
    const agents = async (): Promise<AgentBody[]> => json<AgentBody[]>(await t.app.inject({ url: '/api/agents', headers: owner.auth }));
    const grants = async (): Promise<GrantBody[]> => json<GrantBody[]>(await t.app.inject({ url: '/api/grants', headers: owner.auth }));

    it('lists apps apart from agents by kind, with client_id, client_host and no key; grants carry resource', async () => {
      const { app, grant } = await connectApp(CLIENT_ID, 'Assistant');
      const registered = await connectApp('rc_k4m2x7q9w3e5r8t6y2u4i7o1pa', 'Desktop client', 'https://files.example/mcp', ['files:read']);

      const list = await agents();
      const keyed = list.find((a) => a.id === agent.id);
      assert.deepEqual([keyed?.kind, keyed?.client_id, keyed?.client_host, keyed?.jkt], ['agent', null, null, agent.jkt]);
      const shown = list.find((a) => a.id === app.id);
      assert.deepEqual([shown?.name, shown?.kind, shown?.client_id, shown?.client_host, shown?.jkt, shown?.status], ['Assistant', 'app', CLIENT_ID, 'assistant.example', null, 'active']);
      // A registered client id names no site: no host to show.
      const other = list.find((a) => a.id === registered.app.id);
      assert.deepEqual([other?.kind, other?.client_id, other?.client_host], ['app', 'rc_k4m2x7q9w3e5r8t6y2u4i7o1pa', null]);

      const listed = await grants();
      assert.deepEqual(listed.find((g) => g.id === grant.id), { ...listed.find((g) => g.id === grant.id), agent_id: app.id, site: 'tools.example', resource: RESOURCE, scopes: ['tools:read', 'tools:call'] });
      assert.equal(listed.find((g) => g.agent_id === agent.id)?.resource, null);
      const me = json<{ grants: GrantBody[] }>(await t.app.inject({ url: '/api/me', headers: owner.auth }));
      assert.equal(me.grants.find((g) => g.id === grant.id)?.resource, RESOURCE);
    });

    it("a site step-up with an app's pass is one call of a tool: pending names the app, its host and the resource; the notification says the same", async () => {
      // Named as the browser approval names an app: the client's name and its host (shown once, not twice).
      const { app, grant } = await connectApp('https://caller.example/client', 'Caller (caller.example)', 'https://pay.example/mcp', ['pay']);
      // The app's pass as the token endpoint mints it for a DPoP-bound client: aud = the resource exactly.
      const { publicJwk } = await generateAgentKeyPair();
      const jkt = await jwkThumbprint(publicJwk);
      const pass = await mintPass(t, agent, 'https://pay.example/mcp', { sub: app.id, grant: grant.id, scope: ['pay'], cnf: { dpop: jkt, jkt } });
      const filed = await t.app.inject({ method: 'POST', url: '/api/v1/stepup/site', remoteAddress: remoteAddress(), payload: { access_token: pass, action: 'send_payment', details: DETAILS } });
      expectStatus(filed, 200);
      const txn = json<{ txn_id: string }>(filed).txn_id;

      const me = json<{ pending: PendingBody[] }>(await t.app.inject({ url: '/api/me', headers: owner.auth }));
      const card = me.pending.find((p) => p.id === txn);
      assert.deepEqual([card?.kind, card?.filed_by, card?.action, card?.agent, card?.details], ['stepup', 'site', 'send_payment', 'Caller (caller.example)', DETAILS]);
      assert.deepEqual(card?.app, { client_id: 'https://caller.example/client', client_host: 'caller.example', resource: 'https://pay.example/mcp' });
      // An agent's requests carry no `app`.
      assert.ok(me.pending.filter((p) => p.id !== txn).every((p) => p.app === undefined));

      const inbox = await t.services.store.notifications.list(owner.user.id, { before: 0, limit: 5, since: 0 });
      const note = inbox.find((n) => n.txnId === txn);
      assert.equal(note?.title, 'Caller (caller.example) asks to run send_payment at https://pay.example/mcp');
      assert.equal(note?.body, 'to: ACME amount: 250.00 EUR · bound to exactly these arguments · approve with your passkey');

      // Approved with the passkey, like every card.
      const options = await assertionOptions(t, owner, txn);
      expectStatus(await respond(t, owner, txn, { approve: true, assertion: owner.authenticator.assert(options) }), 200);
      const after = json<{ pending: PendingBody[] }>(await t.app.inject({ url: '/api/me', headers: owner.auth }));
      assert.equal(after.pending.find((p) => p.id === txn), undefined);
    });

    it("revokes one resource's grant, then the whole app, as for every agent", async () => {
      const { app, grant } = await connectApp('https://revoked.example/client', 'Revoked app');
      const second = { ...grant, id: newId('gr'), site: 'more.example', resource: 'https://more.example/mcp' };
      await t.services.store.grants.create(second);

      expectStatus(await t.app.inject({ method: 'POST', url: `/api/grants/${grant.id}/revoke`, headers: owner.auth }), 200);
      assert.deepEqual((await grants()).filter((g) => g.agent_id === app.id).map((g) => g.resource), ['https://more.example/mcp']);
      assert.ok((await agents()).some((a) => a.id === app.id), 'the app stays with its other resource');

      expectStatus(await t.app.inject({ method: 'DELETE', url: `/api/agents/${app.id}`, headers: owner.auth }), 200);
      assert.equal((await agents()).find((a) => a.id === app.id), undefined);
      assert.deepEqual((await grants()).filter((g) => g.agent_id === app.id), []);
      assert.equal((await t.services.store.grants.byId(second.id))?.status, 'revoked');
    });
  });
}
