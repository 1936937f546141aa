import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type OpenStore, useStore } from './use-store.ts';

let n = 0;
const uniq = (p: string): string => `${p}${Date.now().toString(36)}${(n++).toString(36)}`;

/** The storage contract of Web Bot Auth keys (migration 028), on every backend. */
export function wbaKeysContract(name: string, open: OpenStore): void {
  describe(`store contract (wba keys): ${name}`, () => {
    const store = useStore(open);
    const key = (agentId: string, userId: string, kid = uniq('kid')) => ({ agentId, userId, label: uniq('a-'), kid, x: uniq('x') });
    const proof = { contentDigest: 'sha-256=:AA==:', signatureInput: 'binding0=()', signature: 'binding0=:AA==:', expiresAt: 99 };

    it('stores, replaces (dropping the proof) and keeps the label; a proof only lands on the current key', async () => {
      const userId = uniq('u_');
      const agentId = uniq('ag_');
      const first = key(agentId, userId);
      assert.equal(await store.wbaKeys.put(first, 10), 'stored');
      assert.equal(await store.wbaKeys.setProof(agentId, first.kid, proof), true);
      assert.deepEqual((await store.wbaKeys.byAgent(agentId))?.proof, proof);
      // The same key again keeps its proof.
      assert.equal(await store.wbaKeys.put(first, 11), 'stored');
      assert.deepEqual((await store.wbaKeys.byAgent(agentId))?.proof, proof);
      const second = { ...key(agentId, userId), label: 'ignored' };
      assert.equal(await store.wbaKeys.put(second, 20), 'stored');
      const now = await store.wbaKeys.byAgent(agentId);
      assert.equal(now?.kid, second.kid);
      assert.equal(now?.label, first.label);
      assert.equal(now?.proof, null);
      assert.equal(now?.createdAt, 10);
      assert.equal(now?.updatedAt, 20);
      assert.equal(await store.wbaKeys.setProof(agentId, first.kid, proof), false);
      assert.equal((await store.wbaKeys.byLabel(first.label))?.agentId, agentId);
      assert.equal(await store.wbaKeys.byLabel('a-missing'), undefined);
    });

    it('one key belongs to one agent, also when two race', async () => {
      const userId = uniq('u_');
      const kid = uniq('kid');
      const [a, b] = [uniq('ag_'), uniq('ag_')];
      const outcomes = await Promise.all([store.wbaKeys.put(key(a, userId, kid), 1), store.wbaKeys.put(key(b, userId, kid), 1)]);
      assert.deepEqual([...outcomes].sort(), ['stored', 'taken']);
      assert.equal(await store.wbaKeys.put(key(uniq('ag_'), uniq('u_'), kid), 2), 'taken');
    });

    it('lists and deletes the owner\'s keys only', async () => {
      const [u1, u2] = [uniq('u_'), uniq('u_')];
      await store.wbaKeys.put(key(uniq('ag_'), u1), 1);
      await store.wbaKeys.put(key(uniq('ag_'), u1), 2);
      await store.wbaKeys.put(key(uniq('ag_'), u2), 3);
      assert.equal((await store.wbaKeys.listForUser(u1)).length, 2);
      assert.equal(await store.transaction((r) => r.wbaKeys.deleteForUser(u1)), 2);
      assert.equal((await store.wbaKeys.listForUser(u1)).length, 0);
      assert.equal((await store.wbaKeys.listForUser(u2)).length, 1);
    });
  });
}
