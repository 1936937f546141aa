import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AgentRecord, GrantRecord } from '../../src/store/ports/index.ts';
import { type OpenStore, useStore } from './use-store.ts';

let n = 0;
const uniq = (p: string): string => `${p}${Date.now().toString(36)}${(n++).toString(36)}`;

/**
 * What verification and the revocation list read of an app's grant for a protected resource
 * (decisions §28), on every backend: cloud verify's standing read (Kysely and each dialect's own
 * statements) and the revoked grants carry its `resource`, the audience of its passes.
 */
export function resourceStandingContract(name: string, open: OpenStore): void {
  describe(`store contract (resource grants in verify and the revocation list): ${name}`, () => {
    const store = useStore(open);

    const appWithGrant = async (resource: string) => {
      const user = { id: uniq('u_'), email: `${uniq('u')}@example.com`, displayName: 'Ann', passwordHash: 'h', phone: null, phoneVerified: false, createdAt: 1000 };
      assert.equal(await store.users.create(user), true);
      const app: AgentRecord = {
        id: uniq('ag_'), userId: user.id, name: 'Claude', kind: 'app', clientId: uniq('rc_'), publicJwk: null, jkt: null,
        status: 'active', flag: 'ok', flagRevSeq: null, createdAt: 7, removedAt: null, unblockedAt: null, unblockedRevSeq: null,
      };
      await store.agents.create(app);
      const grant: GrantRecord = {
        id: uniq('gr_'), userId: user.id, agentId: app.id, site: new URL(resource).host, scopes: ['tools:read'], userInfo: [],
        status: 'active', createdAt: 1, expiresAt: null, usesLeft: null, refreshHash: null, passesIssued: 0, revokedAt: null, revSeq: null, supersededAt: null, resource,
      };
      await store.grants.create(grant);
      return { app, grant };
    };

    it('the standing read answers the grant\'s resource (withGrant, withGrants, verifyLookup)', async () => {
      const { app, grant } = await appWithGrant('https://mcp.example.com/Mcp?x=1');
      const expected = { id: grant.id, agentId: app.id, site: 'mcp.example.com', resource: 'https://mcp.example.com/Mcp?x=1', status: 'active' };
      assert.deepEqual((await store.agents.withGrant(app.id, grant.id))?.grant, expected);
      assert.deepEqual((await store.agents.withGrants([{ agentId: app.id, grantId: grant.id }]))[0]?.grant, expected);
      const looked = await store.verifyLookup({ agentId: app.id, grantId: grant.id, jti: { namespace: 'dpop', key: uniq('j'), expiresAt: 10_000_000 }, now: 1000 });
      assert.deepEqual(looked.standing?.grant, expected);
      assert.equal(looked.fresh, true);
    });

    it('a revoked resource grant is listed with its resource', async () => {
      const { grant } = await appWithGrant('https://mcp.example.com/mcp');
      assert.equal(await store.grants.revoke(grant.id, 3000, 42), true);
      const row = (await store.grants.listRevoked(3000)).find((x) => x.id === grant.id);
      assert.deepEqual(row && { site: row.site, resource: row.resource, revSeq: row.revSeq }, { site: 'mcp.example.com', resource: 'https://mcp.example.com/mcp', revSeq: 42 });
    });
  });
}
