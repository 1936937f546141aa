import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AgentRecord, OperatorRecord } from '../../src/store/ports/index.ts';
import { type OpenStore, useStore } from './use-store.ts';

let n = 0;
const uniq = (p: string): string => `${p}${Date.now().toString(36)}${(n++).toString(36)}`;

/** The storage contract of operators and the operator switch's block of their agents (migration 024), on every backend. */
export function operatorsContract(name: string, open: OpenStore): void {
  describe(`store contract (operators): ${name}`, () => {
    const store = useStore(open);
    const operator = (over: Partial<OperatorRecord> = {}): OperatorRecord => ({
      id: uniq('op_'), userId: uniq('u_'), name: 'Acme agents', domain: 'acme.example', redirectUris: ['https://acme.example/cb', 'https://acme.example/cb2'],
      browser: 'operator', secretHash: 'ab'.repeat(32), secretSetAt: 1_000, status: 'pending', verificationToken: 'tok', verifiedAt: null,
      statusChangedAt: null, createdAt: 1_000, updatedAt: 1_000, ...over,
    });
    const agent = (userId: string, over: Partial<AgentRecord> = {}): AgentRecord => ({
      id: uniq('ag_'), userId, name: 'Bot', kind: 'agent', clientId: null, publicJwk: { kty: 'EC', crv: 'P-256', x: 'x', y: 'y' }, jkt: 'j',
      status: 'active', flag: 'ok', flagRevSeq: null, createdAt: 5, removedAt: null, unblockedAt: null, unblockedRevSeq: null, ...over,
    });

    it('creates, reads and lists operators: the person\'s oldest first, all newest first and capped', async () => {
      const first = operator();
      const second = operator({ userId: first.userId, createdAt: 2_000, browser: 'user' });
      const stranger = operator({ createdAt: 3_000 });
      for (const o of [first, second, stranger]) await store.operators.create(o);
      assert.deepEqual(await store.operators.byId(first.id), first);
      assert.equal(await store.operators.byId('op_missing'), undefined);
      assert.deepEqual((await store.operators.listForUser(first.userId)).map((o) => o.id), [first.id, second.id]);
      assert.equal(await store.operators.countForUser(first.userId), 2);
      assert.equal(await store.operators.countForUser('u_nobody'), 0);
      const all = await store.operators.listAll(1000);
      assert.ok(all.findIndex((o) => o.id === stranger.id) < all.findIndex((o) => o.id === first.id), 'newest first');
      assert.equal((await store.operators.listAll(1)).length, 1);
    });

    it('replaces the secret of the person\'s own operator only; marks verified; switches status as a compare-and-set', async () => {
      const o = operator();
      await store.operators.create(o);
      assert.equal(await store.operators.replaceSecret('u_other', o.id, 'cd'.repeat(32), 2_000), false);
      assert.equal(await store.operators.replaceSecret(o.userId, o.id, 'cd'.repeat(32), 2_000), true);
      assert.equal((await store.operators.byId(o.id))?.secretHash, 'cd'.repeat(32));
      assert.equal((await store.operators.byId(o.id))?.secretSetAt, 2_000);
      const verified = await store.operators.markVerified(o.id, 3_000);
      assert.equal(verified?.verifiedAt, 3_000);
      assert.equal(await store.operators.markVerified('op_missing', 3_000), undefined);
      const racers = await Promise.all(Array.from({ length: 5 }, () => store.operators.switchStatus(o.id, ['pending', 'disabled'], 'active', 4_000)));
      assert.equal(racers.filter(Boolean).length, 1, 'one of racing switches wins');
      const after = await store.operators.byId(o.id);
      assert.equal(after?.status, 'active');
      assert.equal(after?.statusChangedAt, 4_000);
      assert.equal(await store.operators.switchStatus(o.id, [], 'disabled', 5_000), false);
    });

    it('off blocks exactly the live agents the operator created; on unblocks exactly those, recording the lift', async () => {
      const o = operator();
      await store.operators.create(o);
      const user = uniq('u_');
      const live = agent(user);
      const removed = agent(user, { status: 'removed', removedAt: 50, flagRevSeq: 2 });
      const ownersOwn = agent(user);
      const otherOperators = agent(user);
      for (const a of [live, removed, ownersOwn, otherOperators]) await store.agents.create(a);
      await store.operators.attachAgent(live.id, { operatorId: o.id, connectionId: 'cn_1', browser: 'operator' });
      await store.operators.attachAgent(removed.id, { operatorId: o.id, connectionId: 'cn_1', browser: 'operator' });
      await store.operators.attachAgent(otherOperators.id, { operatorId: 'op_other', connectionId: 'cn_2', browser: 'user' });

      assert.deepEqual(await store.operators.blockAgents(o.id, 9, 100), [live.id]);
      assert.equal((await store.agents.byId(live.id))?.status, 'blocked');
      assert.equal((await store.agents.byId(removed.id))?.status, 'removed');
      assert.equal((await store.agents.byId(ownersOwn.id))?.status, 'active');
      assert.equal((await store.agents.byId(otherOperators.id))?.status, 'active');
      const listed = await store.agents.listRevoked(200, { reason: 'blocked', limit: 1000 });
      const row = listed.find((r) => r.id === live.id);
      assert.equal(row?.blockedRevSeq, 9, 'listed while blocked, with the block\'s rev_seq');
      assert.deepEqual(await store.operators.blockAgents(o.id, 10, 150), [], 'a second off blocks nothing more');

      assert.deepEqual(await store.operators.unblockAgents(o.id, 300), [live.id]);
      const lifted = await store.agents.byId(live.id);
      assert.equal(lifted?.status, 'active');
      assert.equal(lifted?.unblockedAt, 300);
      assert.equal(lifted?.unblockedRevSeq, 9);
      assert.equal((await store.agents.byId(removed.id))?.status, 'removed', 'a removed agent stays removed');
      assert.equal((await store.agents.listRevoked(400, { reason: 'blocked', limit: 1000 })).find((r) => r.id === live.id), undefined);
      assert.deepEqual(await store.operators.unblockAgents(o.id, 400), [], 'nothing left to unblock');
    });

    it('account deletion deletes the person\'s operators, and nobody else\'s', async () => {
      const mine = operator();
      const theirs = operator();
      await store.operators.create(mine);
      await store.operators.create(theirs);
      assert.deepEqual(await store.operators.deleteForUser(mine.userId), [mine.id]);
      assert.equal(await store.operators.byId(mine.id), undefined);
      assert.ok(await store.operators.byId(theirs.id));
      assert.deepEqual(await store.operators.deleteForUser(mine.userId), []);
    });
  });
}
