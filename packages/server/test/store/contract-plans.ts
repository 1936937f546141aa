import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { PlanRecord, PlanStepRecord } from '../../src/store/ports/index.ts';
import { type OpenStore, useStore } from './use-store.ts';

let n = 0;
const uniq = (p: string): string => `${p}${Date.now().toString(36)}${(n++).toString(36)}`;

/** The storage contract of plans (migration 022), on every backend. */
export function plansContract(name: string, open: OpenStore): void {
  describe(`store contract (plans): ${name}`, () => {
    const store = useStore(open);
    const step = (over: Partial<PlanStepRecord> = {}): PlanStepRecord => ({
      id: '1', position: 1, url: 'https://shop.example/cart', host: 'shop.example', path: '/cart*', button: 'Save', category: 'low',
      textDigests: ['ab'.repeat(32)], after: [], uses: 2, usesLeft: 2, approved: false, state: 'waiting', reason: null, ...over,
    });
    const plan = (over: Partial<PlanRecord> = {}): PlanRecord => ({
      id: uniq('p_'), userId: uniq('u_'), agentId: uniq('ag_'), txnId: uniq('t_'), title: 'Weekly shop', startAt: 10_000, endAt: 100_000,
      status: 'pending', createdAt: 5_000, decidedAt: null, steps: [step(), step({ id: 'b', position: 2, path: null, textDigests: [], after: ['1'], uses: 1, usesLeft: 1 })], ...over,
    });

    it('create, byId and byTxnId answer the plan with its steps in order', async () => {
      const p = plan();
      await store.transaction(async (repos) => repos.plans.create(p));
      assert.deepEqual(await store.plans.byId(p.id), p);
      assert.deepEqual(await store.plans.byTxnId(p.txnId), p);
      assert.equal(await store.plans.byId(uniq('p_')), undefined);
    });

    it('transition is a compare-and-set that marks the chosen steps approved; one racer wins', async () => {
      const p = plan();
      await store.plans.create(p);
      const wins = await Promise.all(Array.from({ length: 5 }, () => store.transaction((repos) => repos.plans.transition(p.id, ['pending'], 'approved', 6_000, ['b']))));
      assert.equal(wins.filter(Boolean).length, 1);
      const after = await store.plans.byId(p.id);
      assert.equal(after?.status, 'approved');
      assert.equal(after?.decidedAt, 6_000);
      assert.deepEqual(after?.steps.map((s) => s.approved), [false, true]);
      assert.equal(await store.plans.transition(p.id, ['pending'], 'denied', 7_000), false);
    });

    it('takeUse takes exactly the uses left, racing; only approved steps of approved plans inside the window', async () => {
      const p = plan({ steps: [step({ approved: true, uses: 3, usesLeft: 3 }), step({ id: 'b', position: 2 })] });
      await store.plans.create(p);
      assert.equal(await store.plans.takeUse(p.id, '1', 20_000), false, 'the plan is still pending');
      await store.plans.transition(p.id, ['pending'], 'approved', 6_000);
      assert.equal(await store.plans.takeUse(p.id, '1', 9_999), false, 'before the window');
      assert.equal(await store.plans.takeUse(p.id, '1', 100_000), false, 'after the window');
      assert.equal(await store.plans.takeUse(p.id, 'b', 20_000), false, 'a step the owner did not approve');
      const wins = await Promise.all(Array.from({ length: 8 }, () => store.plans.takeUse(p.id, '1', 20_000)));
      assert.equal(wins.filter(Boolean).length, 3);
      const s = (await store.plans.byId(p.id))!.steps[0]!;
      assert.equal(s.usesLeft, 0);
      assert.equal(s.state, 'running');
      await store.plans.transition(p.id, ['approved'], 'withdrawn', 21_000);
      assert.equal((await store.plans.activeForAgent(p.agentId, 20_000)).length, 0);
    });

    it('activeForAgent and listForAgent; setStepState; deleteForUser', async () => {
      const agentId = uniq('ag_');
      const a = plan({ agentId, startAt: 10_000, endAt: 50_000 });
      const b = plan({ agentId, userId: a.userId, startAt: 40_000, endAt: 90_000 });
      await store.plans.create(a);
      await store.plans.create(b);
      await store.plans.transition(a.id, ['pending'], 'approved', 6_000, ['1']);
      assert.deepEqual((await store.plans.activeForAgent(agentId, 45_000)).map((p) => p.id), [a.id]);
      assert.deepEqual((await store.plans.activeForAgent(agentId, 50_000)).map((p) => p.id), []);
      assert.deepEqual((await store.plans.list({ userId: a.userId, agentId }, 0, 50)).map((p) => p.id), [b.id, a.id]);
      assert.deepEqual((await store.plans.list({ userId: a.userId, agentId }, 60_000, 50)).map((p) => p.id), [b.id]);
      assert.deepEqual((await store.plans.list({ userId: a.userId, agentId }, 0, 1)).map((p) => p.id), [b.id]);
      assert.equal(await store.plans.setStepState(a.id, 'b', 'failed', 'button not found'), true);
      assert.equal(await store.plans.setStepState(a.id, 'zz', 'failed', null), false);
      const st = (await store.plans.byId(a.id))!.steps[1]!;
      assert.deepEqual([st.state, st.reason], ['failed', 'button not found']);
      assert.deepEqual((await store.plans.list({ userId: a.userId }, 0, 50)).map((p) => p.id), [b.id, a.id]);
      assert.deepEqual(await store.plans.list({ userId: uniq('u_'), agentId }, 0, 50), []);
      await store.plans.recordUse(`${a.id}-t`, a.id, '1', 45_000);
      assert.deepEqual(await store.plans.useByTxn(`${a.id}-t`), { planId: a.id, stepId: '1' });
      assert.equal(await store.plans.useByTxn(uniq('t_')), undefined);
      assert.equal(await store.plans.deleteForUser(a.userId), 2);
      assert.equal(await store.plans.useByTxn(`${a.id}-t`), undefined);
      assert.equal(await store.plans.byId(a.id), undefined);
    });
  });
}
