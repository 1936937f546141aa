import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AgentRecord, GrantRecord } from '../../src/store/ports/index.ts';
import { type OpenStore, useStore } from './use-store.ts';

let n = 0;
const uniq = (p: string): string => `${p}${Date.now().toString(36)}${(n++).toString(36)}`;

/**
 * The storage contract of apps as agents and grants for one resource (decisions §28, migration 033),
 * on every backend: an app has no key, an owner has one live app per client_id, and grants are found
 * by (agent, resource) compared exactly.
 */
export function appsContract(name: string, open: OpenStore): void {
  describe(`store contract (apps and resources): ${name}`, () => {
    const store = useStore(open);

    const newUser = async () => {
      const user = { id: uniq('u_'), email: `${uniq('u')}@example.com`, displayName: 'Ann', passwordHash: 'h', phone: null, phoneVerified: false, createdAt: 1000 };
      assert.equal(await store.users.create(user), true);
      return user;
    };
    const appOf = (userId: string, clientId: string, over: Partial<AgentRecord> = {}): AgentRecord => ({
      id: uniq('ag_'), userId, name: 'Claude', kind: 'app', clientId, publicJwk: null, jkt: null,
      status: 'active', flag: 'ok', flagRevSeq: null, createdAt: 7, removedAt: null, unblockedAt: null, unblockedRevSeq: null, ...over,
    });
    const grantOf = (agent: AgentRecord, resource: string | null, over: Partial<GrantRecord> = {}): GrantRecord => ({
      id: uniq('gr_'), userId: agent.userId, agentId: agent.id, site: resource === null ? 'shop.example' : new URL(resource).host, scopes: ['tools:read'], userInfo: [],
      status: 'active', createdAt: 1, expiresAt: null, usesLeft: null, refreshHash: null, passesIssued: 0, revokedAt: null, revSeq: null, supersededAt: null, resource, ...over,
    });

    it('stores an app without a key and reads it back the same (null key, kind, client_id); an agent reads back as kind agent', async () => {
      const u = await newUser();
      const app = appOf(u.id, 'https://client.example/meta.json');
      assert.deepEqual(await store.agents.createApp(app), { app, created: true });
      assert.deepEqual(await store.agents.byId(app.id), app);
      assert.deepEqual(await store.agents.liveAppOf(u.id, 'https://client.example/meta.json'), app);
      assert.deepEqual((await store.agents.listForUser(u.id)).map((a) => [a.id, a.kind, a.clientId, a.publicJwk, a.jkt]), [[app.id, 'app', app.clientId, null, null]]);
      const agent: AgentRecord = { ...appOf(u.id, 'x'), id: uniq('ag_'), kind: 'agent', clientId: null, publicJwk: { kty: 'EC', crv: 'P-256', x: 'x', y: 'y' }, jkt: 'j', createdAt: 8 };
      await store.agents.create(agent);
      assert.deepEqual(await store.agents.byId(agent.id), agent);
      assert.equal(await store.agents.liveAppOf(u.id, 'c_unknown'), undefined);
    });

    it('refuses to store as an app anything with a key or without a client_id', async () => {
      const u = await newUser();
      await assert.rejects(store.agents.createApp({ ...appOf(u.id, 'c_1'), jkt: 'j' }));
      await assert.rejects(store.agents.createApp({ ...appOf(u.id, 'c_1'), clientId: null }));
      await assert.rejects(store.agents.createApp({ ...appOf(u.id, 'c_1'), kind: 'agent' }));
      assert.equal(await store.agents.liveAppOf(u.id, 'c_1'), undefined);
    });

    it('keeps one live app per owner and client_id: a second approval reuses it, racing first approvals make exactly one', async () => {
      const u = await newUser();
      const other = await newUser();
      const first = appOf(u.id, 'rc_same');
      assert.equal((await store.agents.createApp(first)).created, true);
      assert.deepEqual(await store.agents.createApp(appOf(u.id, 'rc_same', { name: 'Other name' })), { app: first, created: false });
      const theirs = appOf(other.id, 'rc_same');
      assert.equal((await store.agents.createApp(theirs)).created, true, 'another owner gets an app of its own');

      const racing = await Promise.all(Array.from({ length: 8 }, () => store.agents.createApp(appOf(u.id, 'c_race'))));
      assert.equal(racing.filter((r) => r.created).length, 1);
      assert.equal(new Set(racing.map((r) => r.app.id)).size, 1, 'every caller answers the one app');
      assert.equal((await store.agents.listForUser(u.id)).filter((a) => a.clientId === 'c_race').length, 1);
    });

    it('a removed app leaves room for a fresh one; a blocked-by-flag app is still the live one', async () => {
      const u = await newUser();
      const old = appOf(u.id, 'c_gone');
      await store.agents.createApp(old);
      await store.agents.update(old.id, { flag: 'revoked', flagRevSeq: 3 });
      assert.equal((await store.agents.liveAppOf(u.id, 'c_gone'))?.id, old.id, 'revoked by flag: still the live app (the owner unblocks it)');
      await store.agents.update(old.id, { status: 'removed', removedAt: 50 });
      assert.equal(await store.agents.liveAppOf(u.id, 'c_gone'), undefined);
      const fresh = appOf(u.id, 'c_gone');
      assert.deepEqual(await store.agents.createApp(fresh), { app: fresh, created: true });
      assert.equal((await store.agents.liveAppOf(u.id, 'c_gone'))?.id, fresh.id);
    });

    it('keeps a grant\'s resource and finds active grants by (agent, resource), compared exactly', async () => {
      const u = await newUser();
      const app = appOf(u.id, 'c_res');
      await store.agents.createApp(app);
      const a = grantOf(app, 'https://mcp.example/a', { createdAt: 10 });
      const b = grantOf(app, 'https://mcp.example/b', { createdAt: 11 });
      await store.grants.create(a);
      await store.grants.create(b);
      assert.deepEqual(await store.grants.byId(a.id), a);
      assert.deepEqual(await store.grants.activeForResource(app.id, 'https://mcp.example/a'), a);
      assert.equal(await store.grants.activeForResource(app.id, 'https://mcp.example/a/'), undefined, 'exact match only');
      assert.equal(await store.grants.activeForResource(app.id, 'https://mcp.example'), undefined);
      assert.equal(await store.grants.activeForResource(uniq('ag_'), 'https://mcp.example/a'), undefined);
      const newer = grantOf(app, 'https://mcp.example/a', { createdAt: 20 });
      await store.grants.create(newer);
      assert.equal((await store.grants.activeForResource(app.id, 'https://mcp.example/a'))?.id, newer.id, 'the newest active one');

      assert.equal(await store.grants.supersedeResource(app.id, 'https://mcp.example/a', 30), 2);
      assert.equal(await store.grants.activeForResource(app.id, 'https://mcp.example/a'), undefined);
      assert.equal((await store.grants.byId(a.id))?.status, 'superseded');
      assert.equal((await store.grants.byId(b.id))?.status, 'active', 'another resource on the same host is untouched');
      assert.equal(await store.grants.revoke(b.id, 40, 9), true);
      assert.equal(await store.grants.activeForResource(app.id, 'https://mcp.example/b'), undefined, 'a revoked grant is not active');
      assert.equal(await store.grants.supersedeResource(app.id, 'https://mcp.example/b', 50), 1, 'a revoked grant is superseded by a fresh approval');
      const plain = grantOf(app, null, { site: 'mcp.example' });
      await store.grants.create(plain);
      assert.equal((await store.grants.byId(plain.id))?.resource, null);
      const other = grantOf(app, 'https://mcp.example/c');
      await store.grants.create(other);
      assert.equal((await store.grants.activeFor(app.id, 'mcp.example'))?.id, plain.id, 'activeFor reads the grant that is not for a resource, never a newer one for a resource on that host');
      assert.equal(await store.grants.supersede(app.id, 'mcp.example', 60), 1, 'a plain sign-in\'s approval replaces the plain grant at the host only');
      assert.equal((await store.grants.byId(plain.id))?.status, 'superseded');
      assert.equal((await store.grants.byId(other.id))?.status, 'active');
    });
  });
}
