import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AgentRecord, ConnectionRecord, OperatorCodeRecord } from '../../src/store/ports/index.ts';
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
    const agent = (c: ConnectionRecord, createdAt: number, over: Partial<AgentRecord> = {}): AgentRecord => ({
      id: uniq('ag_'), userId: c.userId, name: `A${createdAt}`, kind: 'agent', clientId: null, publicJwk: { kty: 'EC', crv: 'P-256', x: 'x', y: 'y' }, jkt: uniq('jkt'),
      status: 'active', flag: 'ok', flagRevSeq: null, createdAt, removedAt: null, unblockedAt: null, unblockedRevSeq: null, ...over,
    });
    async function made(c: ConnectionRecord, createdAt: number, over: Partial<AgentRecord> = {}): Promise<AgentRecord> {
      const a = agent(c, createdAt, over);
      await store.agents.create(a);
      await store.operators.attachAgent(a.id, { operatorId: c.operatorId, connectionId: c.id, browser: 'operator' });
      return a;
    }

    it('lists a person\'s and an operator\'s connections newest first; the limit changes only while live; agents of connections oldest first', async () => {
      const first = await store.connections.createOrLive(connection({ createdAt: 1_000 }));
      await store.connections.end(first.id, 1_500);
      const second = await store.connections.createOrLive(connection({ operatorId: first.operatorId, userId: first.userId, createdAt: 2_000 }));
      const elsewhere = await store.connections.createOrLive(connection({ userId: first.userId, createdAt: 3_000 }));
      assert.deepEqual((await store.connections.listForUser(first.userId, 10)).map((c) => c.id), [elsewhere.id, second.id, first.id]);
      assert.deepEqual((await store.connections.listForUser(first.userId, 2)).map((c) => c.id), [elsewhere.id, second.id]);
      assert.deepEqual((await store.connections.listForOperator(first.operatorId, 10)).map((c) => c.id), [second.id, first.id]);
      assert.equal(await store.connections.setMaxAgents(second.id, 2), true);
      assert.equal(await store.connections.setMaxAgents(first.id, 2), false, 'ended');
      assert.equal((await store.connections.byId(second.id))?.maxAgents, 2);
      const b = await made(second, 20);
      const a = await made(second, 10);
      const gone = await made(second, 30, { status: 'removed', removedAt: 31 });
      const other = await made(elsewhere, 5);
      assert.deepEqual((await store.connections.agentsOf([second.id])).map((x) => [x.id, x.status, x.connectionId, x.operatorId, x.browser]), [
        [a.id, 'active', second.id, second.operatorId, 'operator'], [b.id, 'active', second.id, second.operatorId, 'operator'], [gone.id, 'removed', second.id, second.operatorId, 'operator'],
      ]);
      assert.deepEqual(await store.connections.agentsOf([]), []);
      assert.equal(await store.connections.liveAgents(second.id), 2);
      assert.deepEqual((await store.connections.operatorAgents(second.operatorId, null, 10)).map((x) => x.id), [a.id, b.id, gone.id]);
      assert.deepEqual((await store.connections.operatorAgents(second.operatorId, second.id, 1)).map((x) => x.id), [a.id]);
      assert.deepEqual((await store.connections.operatorAgents(elsewhere.operatorId, second.id, 10)), [], 'only the operator\'s own');
      assert.deepEqual((await store.connections.operatorAgents(elsewhere.operatorId, null, 10)).map((x) => x.id), [other.id]);
      assert.deepEqual((await store.operators.agentOperatorsOfOwner(first.userId)).size, 0, 'no operator row: not shown');
    });

    it('suspends the newest live agents beyond the limit in one statement, and lifts oldest first up to it, recording the lift as an unblock', async () => {
      const c = await store.connections.createOrLive(connection({ maxAgents: 5 }));
      const [a, b, d, e] = [await made(c, 10), await made(c, 20), await made(c, 30), await made(c, 40)];
      await made(c, 15, { status: 'removed', removedAt: 16 });
      await store.connections.setMaxAgents(c.id, 1);
      assert.deepEqual(await store.connections.suspendBeyond({ connectionId: c.id }, 7, 100), [b.id, d.id, e.id].sort());
      assert.deepEqual(await store.connections.suspendBeyond({ connectionId: c.id }, 8, 101), [], 'already suspended');
      const listed = await store.agents.listRevoked(100, { reason: 'suspended', limit: 100 });
      assert.deepEqual(listed.filter((r) => [a.id, b.id, d.id, e.id].includes(r.id)).map((r) => [r.id, r.suspendedRevSeq]).sort(), [[b.id, 7], [d.id, 7], [e.id, 7]].sort());
      await store.connections.setMaxAgents(c.id, 3);
      assert.deepEqual(await store.connections.liftWithin(c.id, 200), [b.id, d.id].sort(), 'oldest first, up to 3');
      const lifted = await store.agents.byId(b.id);
      assert.deepEqual([lifted?.status, lifted?.unblockedAt, lifted?.unblockedRevSeq], ['active', 200, 7]);
      assert.equal((await store.agents.byId(e.id))?.status, 'suspended');
      // The operator switch: off blocks suspended ones too; the scope of an operator applies every connection's limit.
      assert.deepEqual((await store.operators.blockAgents(c.operatorId, 9, 300)).sort(), [a.id, b.id, d.id, e.id].sort());
      assert.deepEqual((await store.operators.unblockAgents(c.operatorId, 400)).sort(), [a.id, b.id, d.id, e.id].sort());
      assert.deepEqual(await store.connections.suspendBeyond({ operatorId: c.operatorId }, 10, 400), [e.id]);
    });
  });
}
