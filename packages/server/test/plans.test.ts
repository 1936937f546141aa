import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createAgent, type TestAgent } from './helpers/agents.ts';
import { expectStatus, json, remoteAddress, testApp, type TestApp } from './helpers/app.ts';
import { type Owner, approve, ownerWithPasskey, respond } from './helpers/approvals.ts';
import { textDigest } from '../src/domain/plans/text-digest.ts';
import { seconds } from '../src/clock.ts';

// Plans (decisions §20) on both databases, with the fixed clock of testApp: submission, the card
// answered with steps, the owner's list and withdraw, and matching of agent approvals to steps.

type PlanView = { plan_id: string; title: string; status: string; start_at: number; end_at: number; steps: { id: string; button: string; state: string; approved: boolean; uses_left: number; reason?: string }[] };

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`plans (${backend})`, { timeout: 120_000 }, () => {
    let t: TestApp;
    let owner: Owner;
    let agent: TestAgent;
    before(async () => {
      t = await testApp({ backend });
      owner = await ownerWithPasskey(t);
    });
    // Each test has its own agent, so plans approved by one test never match in another.
    beforeEach(async () => {
      agent = await createAgent(t, owner, 'Night shopper');
    });
    after(() => t.close());

    const now = () => seconds(t.clock.now());
    const steps = () => [
      { url: 'https://shop.example/cart', button: 'Add to cart', path: '/cart*', uses: 2 },
      { id: 'post', url: 'https://forum.example/t/1', button: 'Post reply', texts: ['Thanks!\r\n'], after: ['1'] },
      { id: 'pay', url: 'https://shop.example/checkout', button: 'Pay now', path: '/checkout' },
    ];
    async function submit(body: Record<string, unknown> = {}, who: TestAgent = agent) {
      return t.app.inject({ method: 'POST', url: '/api/v1/plans', remoteAddress: remoteAddress(), payload: { agent_id: who.id, agent_jwt: await who.jwt(), title: 'Weekly shop', start_at: now() + 60, end_at: now() + 3600, steps: steps(), ...body } });
    }
    async function submitted(body: Record<string, unknown> = {}): Promise<{ plan_id: string; txn_id: string }> {
      const res = await submit(body);
      expectStatus(res, 200);
      return json(res);
    }
    async function status(planId: string, who: TestAgent = agent) {
      return t.app.inject({ method: 'POST', url: `/api/v1/plans/${planId}/status`, payload: { agent_id: who.id, agent_jwt: await who.jwt() } });
    }
    const match = (q: Partial<Parameters<TestApp['services']['plans']['matchStep']>[0]> = {}, at = t.clock.now() + 120_000) =>
      t.services.plans.matchStep({ agentId: agent.id, host: 'shop.example', label: 'add to CART', path: '/cart/items', textDigests: [], ...q }, at);

    it('submits: one pending card of kind plan for the owner; the agent sees every step waiting', async () => {
      const res = await submit();
      expectStatus(res, 200);
      const body = json<{ plan_id: string; txn_id: string; status: string; expires_in: number }>(res);
      assert.match(body.plan_id, /^p_[a-z2-7]{26}$/);
      assert.equal(body.status, 'pending');
      const card = await t.services.store.authzRequests.byId(body.txn_id);
      assert.equal(card?.kind, 'plan');
      assert.equal(card?.status, 'pending');
      const notes = (await t.services.store.notifications.list(owner.user.id, { before: 0, limit: 50, since: 0 })).filter((n) => n.txnId === body.txn_id);
      assert.deepEqual(notes.map((n) => n.title), ['Night shopper asks you to pre-approve a plan']);
      const pending = json<{ pending: { id: string; kind: string; action?: string }[] }>(await t.app.inject({ method: 'GET', url: '/api/me', headers: owner.auth })).pending.find((p) => p.id === body.txn_id);
      assert.deepEqual(pending && [pending.kind, pending.action], ['plan', 'Weekly shop']);
      const view = json<PlanView>(await status(body.plan_id));
      assert.equal(view.status, 'pending');
      assert.deepEqual(view.steps.map((s) => [s.id, s.state, s.approved, s.uses_left]), [['1', 'waiting', false, 0], ['post', 'waiting', false, 0], ['pay', 'waiting', false, 0]]);
      assert.equal(await match({}), undefined, 'an unanswered card pre-approves nothing');
    });

    it('refuses bad plans with 400 naming the rule, a bad token with 401, wrong shapes with 422', async () => {
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ title: '' }, /title/],
        [{ start_at: now() - 120 }, /past/],
        [{ end_at: now() + 60 + 59 }, /60 s to 24 h/],
        [{ steps: [] }, /1 to 20/],
        [{ steps: [{ url: 'http://shop.example/', button: 'Save' }] }, /https/],
        [{ steps: [{ url: 'https://shop.example/', button: 'Delete' }] }, /path/],
        [{ steps: [{ url: 'https://shop.example/', button: 'Send', path: '/x' }] }, /texts/],
        [{ steps: [{ url: 'https://shop.example/', button: 'Save', after: ['9'] }] }, /earlier step/],
        [{ steps: [{ url: 'https://shop.example/', button: 'Save', uses: 6 }] }, /uses/],
      ];
      for (const [body, detail] of cases) {
        const res = await submit(body);
        expectStatus(res, 400);
        assert.match(json<{ detail: string }>(res).detail, detail);
      }
      const other = await createAgent(t);
      const badJwt = await t.app.inject({ method: 'POST', url: '/api/v1/plans', payload: { agent_id: agent.id, agent_jwt: await other.jwt(), title: 'x', start_at: now(), end_at: now() + 60, steps: steps() } });
      assert.equal(badJwt.statusCode, 401);
      expectStatus(await submit({ steps: [{ url: 'https://shop.example/', button: 'Save', extra: 1 }] }), 422);
      expectStatus(await submit({ start_at: 'soon' }), 422);
    });

    it('the owner approves chosen steps with the passkey; money steps never; unknown ids 400', async () => {
      const plan = await submitted();
      expectStatus(await approve(t, owner, plan.txn_id, { steps: ['nope'] }), 400);
      expectStatus(await approve(t, owner, plan.txn_id, { steps: ['1', 'pay'] }), 200);
      const view = json<PlanView>(await status(plan.plan_id));
      assert.equal(view.status, 'approved');
      assert.deepEqual(view.steps.map((s) => [s.id, s.state, s.approved, s.uses_left]), [['1', 'waiting', true, 2], ['post', 'asking', false, 0], ['pay', 'asking', false, 0]]);
      expectStatus(await respond(t, owner, plan.txn_id, { approve: true }), 409);
      // The agent of another owner never sees it.
      expectStatus(await status(plan.plan_id, await createAgent(t)), 404);
    });

    it('matches inside the window only, by host, label words, path rule and digests; uses run out', async () => {
      const plan = await submitted();
      expectStatus(await approve(t, owner, plan.txn_id), 200);
      const start = t.clock.now() + 60_000;
      assert.equal(await match({}, start - 1), undefined, 'before the window');
      assert.equal(await match({}, start + 3_540_000), undefined, 'at the end of the window');
      assert.equal(await match({ host: 'evil.example' }), undefined, 'another host');
      assert.equal(await match({ label: 'Add to basket' }), undefined, 'other words');
      assert.equal(await match({ path: '/checkout' }), undefined, 'outside the path prefix');
      assert.equal(await match({ path: null }), undefined, 'no path for a path rule');
      assert.equal(await match({ agentId: (await createAgent(t, owner)).id }), undefined, 'another agent of the same owner');
      assert.equal(await match({ host: 'shop.example', label: 'Pay now', path: '/checkout' }), undefined, 'money is never pre-approved');
      assert.equal(await match({ host: 'forum.example', label: 'Post reply', path: '/t/1', textDigests: [textDigest('Thanks!')] }), undefined, 'step 1 is not done yet');

      const first = await match({ label: '  Add   to cart ', txnId: 't_aaaaaaaaaaaaaaaaaaaaaaaaaa' });
      assert.deepEqual(first && [first.planId, first.stepId, first.usesLeft], [plan.plan_id, '1', 1]);
      assert.ok(await match({}));
      assert.equal(await match({}), undefined, 'both uses taken');

      const result = await t.app.inject({ method: 'POST', url: '/api/v1/plans/result', payload: { agent_id: agent.id, agent_jwt: await agent.jwt(), txn_id: 't_aaaaaaaaaaaaaaaaaaaaaaaaaa', result: 'done' } });
      expectStatus(result, 200);
      assert.equal(json<PlanView>(result).steps[0]?.state, 'done');
      expectStatus(await t.app.inject({ method: 'POST', url: '/api/v1/plans/result', payload: { agent_id: agent.id, agent_jwt: await agent.jwt(), txn_id: 't_bbbbbbbbbbbbbbbbbbbbbbbbbb', result: 'done' } }), 404);
      const forum = { host: 'forum.example', label: 'post reply', path: '/t/1' };
      assert.equal(await match({ ...forum, textDigests: [textDigest('Thanks?')] }), undefined, 'other text');
      assert.equal(await match({ ...forum, textDigests: [] }), undefined, 'no text');
      const posted = await match({ ...forum, textDigests: [textDigest('\u200bThanks!  '), textDigest('Thanks!')] });
      assert.equal(posted?.stepId, 'post', 'the same digest set once step 1 is done, invisible characters aside');
    });

    it('through POST /api/v1/agent-approval: matching approvals of the chosen steps pass without a card, the others ask', async () => {
      const plan = await submitted({ steps: [
        { url: 'https://shop.example/cart', button: 'Add to cart', path: '/cart*' },
        { id: 'save', url: 'https://shop.example/list', button: 'Save list', path: '/list' },
        { id: 'wish', url: 'https://shop.example/wish', button: 'Update wishlist', path: '/wish' },
      ] });
      expectStatus(await approve(t, owner, plan.txn_id, { steps: ['1', 'save'] }), 200);
      t.clock.advance(120_000);
      const ask = async (action: string, details: Record<string, unknown>) => {
        const res = await t.app.inject({ method: 'POST', url: '/api/v1/agent-approval', remoteAddress: remoteAddress(), payload: { agent_id: agent.id, agent_jwt: await agent.jwt(), site: 'shop.example', action, details } });
        expectStatus(res, 200);
        return json<{ txn_id: string; status: string }>(res);
      };
      const cart = await ask('click', { label: 'Add to cart', host: 'shop.example', path: '/cart/42' });
      assert.equal(cart.status, 'approved', 'a chosen step: no card');
      const saved = await ask('click', { label: 'Save list', host: 'shop.example', path: '/list' });
      assert.equal(saved.status, 'approved');
      const wish = await ask('click', { label: 'Update wishlist', host: 'shop.example', path: '/wish' });
      assert.equal(wish.status, 'pending', 'the step the owner did not tick asks');
      const again = await ask('click', { label: 'Add to cart', host: 'shop.example', path: '/cart/43' });
      assert.equal(again.status, 'pending', 'its one use is spent');
      const pendingIds = (await t.services.store.authzRequests.listPendingForUser(owner.user.id, t.clock.now())).map((r) => r.id);
      assert.ok(pendingIds.includes(wish.txn_id) && pendingIds.includes(again.txn_id) && !pendingIds.includes(cart.txn_id));
      const done = await t.app.inject({ method: 'POST', url: '/api/v1/plans/result', payload: { agent_id: agent.id, agent_jwt: await agent.jwt(), txn_id: cart.txn_id, result: 'done' } });
      expectStatus(done, 200);
      assert.equal(json<PlanView>(done).steps[0]?.state, 'done');
    });

    it('of racing agent approvals exactly as many as the uses get the step', async () => {
      const plan = await submitted({ steps: [{ url: 'https://shop.example/cart', button: 'Add to cart', path: '/cart*', uses: 3 }] });
      expectStatus(await approve(t, owner, plan.txn_id), 200);
      const wins = (await Promise.all(Array.from({ length: 10 }, () => match({})))).filter((m) => m?.planId === plan.plan_id);
      assert.equal(wins.length, 3);
      assert.equal(json<PlanView>(await status(plan.plan_id)).steps[0]?.uses_left, 0);
    });

    it('a denied card denies the plan; the owner lists plans per agent and withdraws', async () => {
      const denied = await submitted();
      expectStatus(await respond(t, owner, denied.txn_id, { approve: false }), 200);
      const view = json<PlanView>(await status(denied.plan_id));
      assert.equal(view.status, 'denied');
      assert.ok(view.steps.every((s) => s.state === 'denied' && !s.approved));

      const pending = await submitted();
      const list = await t.app.inject({ method: 'GET', url: `/api/plans?agent_id=${agent.id}`, headers: owner.auth });
      expectStatus(list, 200);
      const plans = json<(PlanView & { agent_id: string; txn_id: string })[]>(list);
      assert.ok(plans.some((p) => p.plan_id === pending.plan_id && p.txn_id === pending.txn_id && p.agent_id === agent.id));
      assert.ok(plans.length <= 50);
      expectStatus(await t.app.inject({ method: 'GET', url: `/api/plans?agent_id=${(await createAgent(t)).id}`, headers: owner.auth }), 404);
      expectStatus(await t.app.inject({ method: 'GET', url: '/api/plans' }), 401);

      const withdrawn = await t.app.inject({ method: 'POST', url: `/api/plans/${pending.plan_id}/withdraw`, headers: owner.auth });
      expectStatus(withdrawn, 200);
      assert.equal(json<PlanView>(withdrawn).status, 'withdrawn');
      assert.equal((await t.services.store.authzRequests.byId(pending.txn_id))?.status, 'denied', 'its open card is closed');
      expectStatus(await t.app.inject({ method: 'POST', url: `/api/plans/${pending.plan_id}/withdraw`, headers: owner.auth }), 409);

      const approved = await submitted();
      expectStatus(await approve(t, owner, approved.txn_id), 200);
      expectStatus(await t.app.inject({ method: 'POST', url: `/api/plans/${approved.plan_id}/withdraw`, headers: owner.auth }), 200);
      assert.equal((await match({})), undefined, 'a withdrawn plan pre-approves nothing');
      const stranger = await ownerWithPasskey(t);
      expectStatus(await t.app.inject({ method: 'POST', url: `/api/plans/${approved.plan_id}/withdraw`, headers: stranger.auth }), 404);
    });

    it('an unanswered card expires and pre-approves nothing', async () => {
      const plan = await submitted();
      t.clock.advance(301_000);
      assert.equal(json<PlanView>(await status(plan.plan_id)).status, 'expired');
      assert.equal(await match({}, t.clock.now() + 60_000), undefined);
    });
  });
}
