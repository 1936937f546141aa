import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { AgentRecord, GrantRecord, PassIssuance, Store } from '../../src/store/ports/index.ts';
import { type OpenStore, useStore } from './use-store.ts';

let n = 0;
const uniq = (p: string): string => `${p}${Date.now().toString(36)}${(n++).toString(36)}`;

const WINDOW_MS = 60_000;

/**
 * Store.commitPassIssuance (ports/passes.ts), written once and run against every implementation:
 * the rate counter, the grant's compare-and-set and the `pass.issued` record committed together, in
 * group commits, with one winner per refresh token and exact counts under concurrency.
 */
export function passIssuanceContract(name: string, open: OpenStore): void {
  describe(`pass issuance commits: ${name}`, () => {
    const store = useStore(open);

    const owner = async () => {
      const user = { id: uniq('u_'), email: `${uniq('u')}@example.com`, displayName: 'Ann', passwordHash: 'h', phone: null, phoneVerified: false, createdAt: 1000 };
      assert.equal(await store.users.create(user), true);
      return user;
    };
    const agent = async (userId: string): Promise<AgentRecord> => {
      const a: AgentRecord = {
        id: uniq('ag_'), userId, name: 'Bot', kind: 'agent', clientId: null, publicJwk: { kty: 'EC', crv: 'P-256', x: 'x', y: 'y' }, jkt: 'j',
        status: 'active', flag: 'ok', flagRevSeq: null, createdAt: 5, removedAt: null, unblockedAt: null, unblockedRevSeq: null,
      };
      await store.agents.create(a);
      return a;
    };
    const grant = async (over: Partial<GrantRecord> = {}): Promise<GrantRecord> => {
      const userId = over.userId ?? (await owner()).id;
      const agentId = over.agentId ?? (await agent(userId)).id;
      const g: GrantRecord = {
        id: uniq('gr_'), userId, agentId, site: 'shop.example', scopes: ['list'], userInfo: [], status: 'active',
        createdAt: 1, expiresAt: null, usesLeft: null, refreshHash: 'r0', passesIssued: 0, revokedAt: null, revSeq: null, supersededAt: null, resource: null, ...over,
      };
      await store.grants.create(g);
      return g;
    };
    const issuance = (g: GrantRecord, o: { now?: number; next?: string; expected?: string | null; limit?: number; i?: number } = {}): PassIssuance => ({
      grantId: g.id,
      now: o.now ?? 120_000,
      newRefreshHash: o.next ?? uniq('r'),
      expectedRefreshHash: o.expected === null ? undefined : (o.expected ?? 'r0'),
      rate: { key: `token:${g.agentId}:${g.site}`, windowMs: WINDOW_MS, limit: o.limit ?? 1000 },
      record: { detail: { grant: g.id, expires_in: 600, refreshed: o.expected !== null, i: o.i ?? 0 }, ip: '10.0.0.1', createdAt: o.now ?? 120_000 },
    });
    const records = (userId: string) => store.activity.list(userId, { before: 0, limit: 500 });

    it("the token path's reads (batched on PostgreSQL) answer each concurrent caller its own agent and newest active grant", async () => {
      const u = await owner();
      const agents = [await agent(u.id), await agent(u.id), await agent(u.id)];
      const [a0, a1, a2] = agents as [AgentRecord, AgentRecord, AgentRecord];
      const older = await grant({ userId: u.id, agentId: a0.id, createdAt: 10 });
      const newer = await grant({ userId: u.id, agentId: a0.id, createdAt: 20 });
      const elsewhere = await grant({ userId: u.id, agentId: a0.id, site: 'other.example', createdAt: 30 });
      await grant({ userId: u.id, agentId: a1.id, createdAt: 40, status: 'revoked' });
      const reads = await Promise.all([
        store.agents.byId(a0.id), store.agents.byId('ag_nobody'), store.agents.byId(a2.id), store.agents.byId(a0.id),
        store.grants.activeFor(a0.id, 'shop.example'), store.grants.activeFor(a0.id, 'other.example'), store.grants.activeFor(a1.id, 'shop.example'),
        store.grants.activeFor(a2.id, 'shop.example'), store.grants.activeFor(a0.id, 'shop.example'),
      ]);
      assert.deepEqual(reads.slice(0, 4), [a0, undefined, a2, a0]);
      assert.deepEqual(reads.slice(4), [newer, elsewhere, undefined, undefined, newer]);
      assert.notEqual(newer.id, older.id);
    });

    it('spends a use, rotates the refresh token and writes the pass.issued record in one commit', async () => {
      const g = await grant({ usesLeft: 3 });
      await store.counters.next('rev_seq');
      const revSeq = await store.counters.current('rev_seq');
      const out = await store.commitPassIssuance(issuance(g, { next: 'r1' }));
      assert.equal(out.kind, 'issued');
      if (out.kind !== 'issued') return;
      assert.equal(out.revSeq, revSeq);
      assert.deepEqual({ ...out.grant }, { ...g, usesLeft: 2, refreshHash: 'r1', passesIssued: 1 });
      assert.deepEqual(await store.grants.byId(g.id), out.grant);
      const [r, ...more] = await records(g.userId);
      assert.equal(more.length, 0);
      assert.equal(r?.seq, 1);
      assert.deepEqual({ ...r }, { seq: 1, userId: g.userId, agentId: g.agentId, site: g.site, action: 'pass.issued', detail: { grant: g.id, expires_in: 600, refreshed: true, i: 0, uses_left: 2 }, ip: '10.0.0.1', createdAt: 120_000 });
      // The old refresh token is spent; the new one works; a grant without a limit records null.
      assert.deepEqual(await store.commitPassIssuance(issuance(g, { expected: 'r0' })), { kind: 'refused' });
      assert.equal((await store.commitPassIssuance(issuance(g, { expected: 'r1', next: 'r2' }))).kind, 'issued');
      const unlimited = await grant();
      const u = await store.commitPassIssuance(issuance(unlimited));
      assert.equal(u.kind === 'issued' && u.grant.usesLeft, null);
      assert.equal((await records(unlimited.userId))[0]?.detail['uses_left'], null);
    });

    it('refuses without writing anything but the rate counter: stale token, no uses, expired, not active', async () => {
      const cases = [
        { g: await grant(), q: { expected: 'not-current' } },
        { g: await grant({ usesLeft: 0 }), q: {} },
        { g: await grant({ expiresAt: 120_000 }), q: {} },
        { g: await grant({ status: 'revoked', refreshHash: null }), q: { expected: null } },
        { g: await grant({ status: 'superseded' }), q: {} },
      ];
      for (const { g, q } of cases) {
        assert.deepEqual(await store.commitPassIssuance(issuance(g, q)), { kind: 'refused' }, JSON.stringify(q));
        assert.deepEqual(await store.grants.byId(g.id), g);
        assert.deepEqual(await records(g.userId), []);
        assert.equal((await store.rateCounters.hit(`token:${g.agentId}:${g.site}`, WINDOW_MS, 120_000)).count, 2, 'the refused call was counted');
      }
      // A grant that expires later still issues.
      const later = await grant({ expiresAt: 120_001 });
      assert.equal((await store.commitPassIssuance(issuance(later))).kind, 'issued');
    });

    it('counts every call; over the limit it writes nothing else and says when the window ends', async () => {
      const g = await grant();
      const now = 185_000; // the window of 60 s starting at 180 000
      assert.equal((await store.commitPassIssuance(issuance(g, { now, limit: 2, next: 'a' }))).kind, 'issued');
      assert.equal((await store.commitPassIssuance(issuance(g, { now, limit: 2, expected: 'a', next: 'b' }))).kind, 'issued');
      assert.deepEqual(await store.commitPassIssuance(issuance(g, { now, limit: 2, expected: 'b', next: 'c' })), { kind: 'limited', resetAt: 240_000 });
      assert.equal((await store.grants.byId(g.id))?.refreshHash, 'b', 'the limited call rotated nothing');
      assert.equal((await records(g.userId)).length, 2);
      assert.equal((await store.commitPassIssuance(issuance(g, { now: 240_000, limit: 2, expected: 'b', next: 'c' }))).kind, 'issued', 'a new window');
    });

    it('of 50 concurrent calls with one refresh token exactly one is issued, all are counted, one record', async () => {
      const g = await grant({ usesLeft: 10 });
      const outs = await Promise.all(Array.from({ length: 50 }, (_, i) => store.commitPassIssuance(issuance(g, { next: `r1-${i}`, i }))));
      const won = outs.flatMap((o, i) => (o.kind === 'issued' ? [i] : []));
      assert.equal(won.length, 1);
      assert.equal(outs.filter((o) => o.kind === 'refused').length, 49);
      const after = await store.grants.byId(g.id);
      assert.equal(after?.refreshHash, `r1-${won[0]}`);
      assert.equal(after?.usesLeft, 9);
      assert.equal(after?.passesIssued, 1);
      const trail = await records(g.userId);
      assert.equal(trail.length, 1);
      assert.equal(trail[0]?.detail['i'], won[0]);
      assert.equal((await store.rateCounters.hit(`token:${g.agentId}:${g.site}`, WINDOW_MS, 120_000)).count, 51);
    });

    it('concurrent calls without a refresh token spend exactly the uses left, records numbered without gaps', async () => {
      const g = await grant({ usesLeft: 5 });
      const outs = await Promise.all(Array.from({ length: 20 }, (_, i) => store.commitPassIssuance(issuance(g, { expected: null, i }))));
      const issued = outs.filter((o) => o.kind === 'issued');
      assert.equal(issued.length, 5);
      assert.deepEqual(issued.map((o) => (o.kind === 'issued' ? o.grant.usesLeft : -1)).sort(), [0, 1, 2, 3, 4]);
      assert.equal((await store.grants.byId(g.id))?.usesLeft, 0);
      const trail = await records(g.userId);
      assert.deepEqual(trail.map((r) => r.seq), [5, 4, 3, 2, 1]);
      assert.deepEqual(trail.map((r) => r.detail['uses_left']).sort(), [0, 1, 2, 3, 4]);
    });

    it('concurrent calls on many grants of a few owners: all issued, each trail numbered 1..n, the exact limit per key', async () => {
      const owners = [await owner(), await owner(), await owner()];
      const grants: GrantRecord[] = [];
      for (let i = 0; i < 30; i++) {
        const o = owners[i % 3];
        if (!o) throw new Error('no owner');
        grants.push(await grant({ userId: o.id, agentId: (await agent(o.id)).id }));
      }
      // Each grant: 3 calls without a refresh token, limit 2 per key: 2 issued, 1 limited.
      const calls = grants.flatMap((g) => [0, 1, 2].map((i) => ({ g, i })));
      const outs = await Promise.all(calls.map(({ g, i }) => store.commitPassIssuance(issuance(g, { expected: null, limit: 2, i }))));
      assert.equal(outs.filter((o) => o.kind === 'issued').length, 60);
      assert.equal(outs.filter((o) => o.kind === 'limited').length, 30);
      for (const o of owners) {
        assert.deepEqual((await records(o.id)).map((r) => r.seq), Array.from({ length: 20 }, (_, i) => 20 - i));
      }
      for (const g of grants) assert.equal((await store.grants.byId(g.id))?.passesIssued, 2);
    });
  });
}

/** Two nodes (two stores) on one database: the guarantees hold across them. */
export function passIssuanceAcrossNodes(name: string, open: () => Promise<{ stores: [Store, Store]; cleanup: () => Promise<void> }>): void {
  describe(`pass issuance commits across two nodes: ${name}`, () => {
    let stores: [Store, Store];
    let cleanup: () => Promise<void>;
    before(async () => {
      ({ stores, cleanup } = await open());
    });
    after(async () => {
      for (const s of stores) await s.close();
      await cleanup();
    });

    it('one winner per refresh token, exact rate limit and gap-free trail across nodes', async () => {
      const [a, b] = stores;
      const user = { id: uniq('u_'), email: `${uniq('u')}@example.com`, displayName: 'Ann', passwordHash: 'h', phone: null, phoneVerified: false, createdAt: 1000 };
      await a.users.create(user);
      const ag: AgentRecord = { id: uniq('ag_'), userId: user.id, name: 'Bot', kind: 'agent', clientId: null, publicJwk: { kty: 'EC', crv: 'P-256', x: 'x', y: 'y' }, jkt: 'j', status: 'active', flag: 'ok', flagRevSeq: null, createdAt: 5, removedAt: null, unblockedAt: null, unblockedRevSeq: null };
      await a.agents.create(ag);
      const g: GrantRecord = { id: uniq('gr_'), userId: user.id, agentId: ag.id, site: 'shop.example', scopes: [], userInfo: [], status: 'active', createdAt: 1, expiresAt: null, usesLeft: null, refreshHash: 'r0', passesIssued: 0, revokedAt: null, revSeq: null, supersededAt: null, resource: null };
      await a.grants.create(g);
      const q = (i: number, expected: string | undefined, limit = 1000): PassIssuance => ({
        grantId: g.id, now: 120_000, newRefreshHash: `n${i}`, expectedRefreshHash: expected,
        rate: { key: `token:${ag.id}:shop.example`, windowMs: WINDOW_MS, limit }, record: { detail: { i }, ip: null, createdAt: 120_000 },
      });
      const race = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).commitPassIssuance(q(i, 'r0'))));
      assert.equal(race.filter((o) => o.kind === 'issued').length, 1);
      // 80 calls without a refresh token, limit 60 per window over both nodes (40 already counted above).
      const spend = await Promise.all(Array.from({ length: 80 }, (_, i) => (i % 2 === 0 ? a : b).commitPassIssuance(q(100 + i, undefined, 60))));
      assert.equal(spend.filter((o) => o.kind === 'issued').length, 20);
      assert.equal(spend.filter((o) => o.kind === 'limited').length, 60);
      const trail = await b.activity.list(user.id, { before: 0, limit: 100 });
      assert.deepEqual(trail.map((r) => r.seq), Array.from({ length: 21 }, (_, i) => 21 - i));
      assert.equal((await a.grants.byId(g.id))?.passesIssued, 21);
    });
  });
}
