import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AuthzRequestRecord } from '../../src/store/ports/index.ts';
import { type OpenStore, useStore } from './use-store.ts';

let n = 0;
const uniq = (p: string): string => `${p}${Date.now().toString(36)}${(n++).toString(36)}`;

/** The storage contract of approval modes and agent-approval details (migration 021), on every backend. */
export function approvalModesContract(name: string, open: OpenStore): void {
  describe(`store contract (approval modes, agent approvals): ${name}`, () => {
    const store = useStore(open);

    it('put inserts or replaces one row per agent and site; remove answers whether there was one; pause scope per agent', async () => {
      const agentId = uniq('ag_');
      assert.deepEqual(await store.approvalModes.list(agentId), []);
      assert.equal(await store.approvalModes.pauseScope(agentId), undefined);
      await store.approvalModes.put({ agentId, site: '*', mode: 'smart', hourlyLimit: 5 });
      await store.approvalModes.put({ agentId, site: 'shop.example', mode: 'allow', hourlyLimit: 20 });
      await store.approvalModes.put({ agentId, site: 'shop.example', mode: 'ask', hourlyLimit: 7 });
      await store.approvalModes.put({ agentId: uniq('ag_'), site: '*', mode: 'ask', hourlyLimit: 20 });
      assert.deepEqual(await store.approvalModes.list(agentId), [
        { agentId, site: '*', mode: 'smart', hourlyLimit: 5 },
        { agentId, site: 'shop.example', mode: 'ask', hourlyLimit: 7 },
      ]);
      assert.equal(await store.approvalModes.remove(agentId, 'shop.example'), true);
      assert.equal(await store.approvalModes.remove(agentId, 'shop.example'), false);
      await store.approvalModes.setPauseScope(agentId, 'host');
      await store.approvalModes.setPauseScope(agentId, 'domain');
      assert.equal(await store.approvalModes.pauseScope(agentId), 'domain');
      await store.approvalModes.removeAgent(agentId);
      assert.deepEqual(await store.approvalModes.list(agentId), []);
      assert.equal(await store.approvalModes.pauseScope(agentId), undefined);
    });

    it('keeps the details of an agent approval; decidedSince answers that agent\'s requests of a kind and status since a time', async () => {
      const agentId = uniq('ag_');
      const base = (over: Partial<AuthzRequestRecord>): AuthzRequestRecord => ({
        id: uniq('t_'), kind: 'agent_approval', agentId, userId: uniq('u_'), site: 'shop.example', scopes: [], userInfo: [], action: 'click', status: 'pending',
        createdAt: 1_000, expiresAt: 301_000, decidedAt: null, grantId: null, oidc: null, details: { label: 'Pay now', amount: '5 EUR', card_fields: true, text_digests: ['a'.repeat(64)] }, ...over,
      });
      const a = base({});
      const b = base({ details: null });
      await store.authzRequests.create(a);
      await store.authzRequests.create(b);
      assert.deepEqual((await store.authzRequests.byId(a.id))?.details, a.details);
      assert.equal((await store.authzRequests.byId(b.id))?.details, undefined);
      await store.authzRequests.transition(a.id, ['pending'], 'denied', 2_000);
      await store.authzRequests.transition(b.id, ['pending'], 'approved', 3_000);
      assert.deepEqual((await store.authzRequests.decidedSince(agentId, 'agent_approval', 'denied', 2_000)).map((r) => r.id), [a.id]);
      assert.deepEqual(await store.authzRequests.decidedSince(agentId, 'agent_approval', 'denied', 2_001), []);
      assert.deepEqual(await store.authzRequests.decidedSince(agentId, 'stepup', 'denied', 0), []);
      assert.deepEqual((await store.authzRequests.decidedSince(agentId, 'agent_approval', 'approved', 0)).map((r) => r.id), [b.id]);
    });
  });
}
