import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ConnectionRecord, OperatorCodeRecord } from '../../src/store/ports/index.ts';
import { type OpenStore, useStore } from './use-store.ts';

let n = 0;
const uniq = (p: string): string => `${p}${Date.now().toString(36)}${(n++).toString(36)}`;

/** The storage contract of operator connections and their codes (migrations 024-025), on every backend. */
export function connectionsContract(name: string, open: OpenStore): void {
  describe(`store contract (operator connections): ${name}`, () => {
    const store = useStore(open);
    const connection = (over: Partial<ConnectionRecord> = {}): ConnectionRecord => ({
      id: uniq('cn_'), operatorId: uniq('op_'), userId: uniq('u_'), sub: 'sub-1', maxAgents: 5, status: 'active', createdAt: 1_000, endedAt: null, ...over,
    });
    const code = (over: Partial<OperatorCodeRecord> = {}): OperatorCodeRecord => ({
      codeHash: uniq('h'), operatorId: uniq('op_'), userId: uniq('u_'), redirectUri: 'https://acme.example/cb', codeChallenge: 'c'.repeat(43),
      expiresAt: 61_000, usedAt: null, connectionId: null, ...over,
    });

    it('one live connection per operator and person: a second answers the first; after it ends a new one is made', async () => {
      const first = connection();
      assert.deepEqual(await store.connections.createOrLive(first), first);
      const second = connection({ operatorId: first.operatorId, userId: first.userId, createdAt: 2_000 });
      assert.deepEqual(await store.connections.createOrLive(second), first, 'the live one, not a second');
      assert.equal(await store.connections.byId(second.id), undefined);
      assert.equal(await store.connections.end(first.id, 3_000), true);
      assert.equal(await store.connections.end(first.id, 4_000), false, 'ends once');
      assert.deepEqual(await store.connections.byId(first.id), { ...first, status: 'removed', endedAt: 3_000 });
      assert.deepEqual(await store.connections.createOrLive(second), second);
      assert.equal(await store.connections.byId('cn_missing'), undefined);
      assert.equal(await store.connections.end('cn_missing', 1), false);
    });

    it('racing creations for one operator and person: all answer the same single live row', async () => {
      const base = connection();
      const answers = await Promise.all(Array.from({ length: 6 }, () => store.connections.createOrLive({ ...base, id: uniq('cn_') })));
      assert.equal(new Set(answers.map((a) => a.id)).size, 1);
    });

    it('a code is spent once, only unexpired; racing spenders: exactly one wins; the spent code stays readable with its connection', async () => {
      const c = code();
      await store.connections.saveCode(c);
      assert.deepEqual(await store.connections.codeByHash(c.codeHash), c);
      assert.equal(await store.connections.spendCode(c.codeHash, 61_000), undefined, 'expired at expiresAt');
      const winners = (await Promise.all(Array.from({ length: 8 }, () => store.connections.spendCode(c.codeHash, 60_000)))).filter((r) => r !== undefined);
      assert.equal(winners.length, 1);
      assert.deepEqual(winners[0], { ...c, usedAt: 60_000 });
      assert.equal(await store.connections.spendCode(c.codeHash, 60_000), undefined);
      await store.connections.linkCode(c.codeHash, 'cn_x');
      assert.deepEqual(await store.connections.codeByHash(c.codeHash), { ...c, usedAt: 60_000, connectionId: 'cn_x' });
      assert.equal(await store.connections.spendCode('missing', 1), undefined);
      assert.equal(await store.connections.codeByHash('missing'), undefined);
    });

    it('purges codes that expired before a time; account deletion removes a person\'s codes and connections', async () => {
      const old = code({ expiresAt: 10 });
      const young = code({ expiresAt: 10_000_000_000 });
      await store.connections.saveCode(old);
      await store.connections.saveCode(young);
      assert.ok((await store.connections.purgeCodes(11)) >= 1);
      assert.equal(await store.connections.codeByHash(old.codeHash), undefined);
      assert.ok(await store.connections.codeByHash(young.codeHash));
      const conn = await store.connections.createOrLive(connection({ userId: young.userId }));
      await store.operators.deleteForUser(young.userId);
      assert.equal(await store.connections.codeByHash(young.codeHash), undefined);
      assert.equal(await store.connections.byId(conn.id), undefined);
    });
  });
}
