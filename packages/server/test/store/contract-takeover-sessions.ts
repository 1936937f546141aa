import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { TakeoverRecord } from '../../src/store/ports/index.ts';
import { type OpenStore, useStore } from './use-store.ts';

let n = 0;
const uniq = (p: string): string => `${p}${Date.now().toString(36)}${(n++).toString(36)}`;

/** The storage contract of take-over sessions and reports (migration 023), on every backend. */
export function takeoverSessionsContract(name: string, open: OpenStore): void {
  describe(`store contract (take-over sessions): ${name}`, () => {
    const store = useStore(open);
    const session = (over: Partial<TakeoverRecord> = {}): Omit<TakeoverRecord, 'state' | 'relayNode' | 'endedAt'> => ({
      id: uniq('tk_'), agentId: uniq('ag_'), userId: uniq('u_'), url: 'https://shop.example/cart', reason: 'captcha', tokenHash: 'ab'.repeat(32), createdAt: 1_000, expiresAt: 601_000, ...over,
    });

    it('one open session per agent, even racing; an expired one no longer counts', async () => {
      const base = session();
      const racers = Array.from({ length: 6 }, () => session({ agentId: base.agentId, userId: base.userId }));
      const won = await Promise.all(racers.map((r) => store.takeovers.open(r, 1_000)));
      assert.equal(won.filter(Boolean).length, 1);
      const winner = racers[won.indexOf(true)]!;
      assert.deepEqual((await store.takeovers.activeForUser(base.userId, 2_000)).map((t) => t.id), [winner.id]);
      assert.equal((await store.takeovers.activeForUser(base.userId, 601_000)).length, 0, 'expired at expires_at');
      const later = session({ agentId: base.agentId, userId: base.userId, createdAt: 601_000, expiresAt: 1_201_000 });
      assert.equal(await store.takeovers.open(later, 601_000), true);
      assert.equal((await store.takeovers.byId(winner.id))?.state, 'expired');
    });

    it('the first node to claim the relay wins, even racing; a move is a compare-and-set; an ended session has none', async () => {
      const s = session();
      await store.takeovers.open(s, 1_000);
      assert.equal((await store.takeovers.byId(s.id))?.relayNode, null);
      const nodes = Array.from({ length: 6 }, (_, i) => `http://10.0.0.${i + 1}:3000`);
      const answers = await Promise.all(nodes.map((node) => store.takeovers.claimRelayNode(s.id, node)));
      const first = answers[0];
      assert.ok(first !== undefined && nodes.includes(first));
      assert.ok(answers.every((a) => a === first), `every racer is told the same node: ${answers.join(', ')}`);
      assert.equal((await store.takeovers.byId(s.id))?.relayNode, first);
      const other = nodes.find((n) => n !== first)!;
      assert.equal(await store.takeovers.moveRelayNode(s.id, other, 'http://10.0.0.9:3000'), false, 'only from the recorded node');
      const moves = await Promise.all(['http://10.0.0.7:3000', 'http://10.0.0.8:3000'].map((to) => store.takeovers.moveRelayNode(s.id, first, to)));
      assert.equal(moves.filter(Boolean).length, 1);
      assert.equal(await store.takeovers.claimRelayNode(s.id, other), moves[0] ? 'http://10.0.0.7:3000' : 'http://10.0.0.8:3000');
      assert.equal(await store.takeovers.end(s.id, 'done', 2_000), true);
      assert.equal(await store.takeovers.claimRelayNode(s.id, other), undefined);
      assert.equal(await store.takeovers.moveRelayNode(s.id, 'http://10.0.0.7:3000', other), false);
    });

    it('statesOf answers the state of the sessions that exist, in chunks', async () => {
      const open = session();
      const done = session();
      await store.takeovers.open(open, 1_000);
      await store.takeovers.open(done, 1_000);
      await store.takeovers.end(done.id, 'cancelled', 2_000);
      const ids = [open.id, done.id, 'tk_missing', ...Array.from({ length: 600 }, () => uniq('tk_'))];
      const states = await store.takeovers.statesOf(ids);
      assert.deepEqual([...states.entries()].sort(), [[open.id, 'open'], [done.id, 'cancelled']].sort());
      assert.equal((await store.takeovers.statesOf([])).size, 0);
    });

    it('end wins once among racers; expiredOpen lists the due ones', async () => {
      const s = session();
      await store.takeovers.open(s, 1_000);
      const r = await store.takeovers.byId(s.id);
      assert.equal(r?.tokenHash, s.tokenHash);
      assert.ok((await store.takeovers.expiredOpen(601_000, 1000)).some((t) => t.id === s.id));
      const ends = await Promise.all(['done', 'cancelled', 'expired', 'agent_left'].map((st) => store.takeovers.end(s.id, st as 'done', 5_000)));
      assert.equal(ends.filter(Boolean).length, 1);
      const ended = await store.takeovers.byId(s.id);
      assert.notEqual(ended?.state, 'open');
      assert.equal(ended?.endedAt, 5_000);
      assert.ok(!(await store.takeovers.expiredOpen(601_000, 1000)).some((t) => t.id === s.id));
      assert.ok((await store.takeovers.purgeBefore(601_001)) >= 1);
      assert.equal(await store.takeovers.byId(s.id), undefined, 'purged once its time is long past');
    });

    it('reports list newest first per owner; deleteForUser removes sessions and reports', async () => {
      const userId = uniq('u_');
      for (const [i, kind] of (['shadow_dom', 'other'] as const).entries()) {
        await store.takeovers.addReport({ id: uniq('tkr_'), agentId: 'ag_x', userId, site: 'shop.example', kind, detail: i ? null : 'closed shadow root', url: null, createdAt: 1_000 + i });
      }
      const list = await store.takeovers.reportsForUser(userId, 10);
      assert.deepEqual(list.map((r) => r.kind), ['other', 'shadow_dom']);
      assert.equal(list[1]!.detail, 'closed shadow root');
      await store.takeovers.open(session({ userId }), 1_000);
      assert.equal(await store.takeovers.deleteForUser(userId), 3);
      assert.equal((await store.takeovers.reportsForUser(userId, 10)).length, 0);
    });
  });
}
