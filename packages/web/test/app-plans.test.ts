import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createAgentJwt } from '@mandate/protocol';
import type { ServerProcess } from '../../server/test/helpers/server-process.ts';
import type { AgentKey } from './helpers/agent-runner.ts';
import { call, expectStatus } from '../../server/test/helpers/over-http.ts';
import { type OwnerAppRig, expectNoError, expectNoSidewaysScroll, goTo, ownerWithAgent, requestCard, sessionCookie, startOwnerAppRig } from './helpers/owner-app.ts';

// Plans in the owner app (decisions §20), on a phone (390 px): the plan card shows the steps with
// tick boxes, a payment step shown but not tickable; the owner unticks one step and approves the
// rest with the passkey (virtual authenticator); the Plans list under Agents shows the outcome and
// withdraws the plan.

let rig: OwnerAppRig;
let server: ServerProcess;
let key: AgentKey;

before(async () => {
  rig = await startOwnerAppRig('owner app (plans)');
  ({ server, key } = rig);
});

after(() => rig?.close());

type PlanView = { plan_id: string; txn_id: string; status: string; steps: { id: string; approved: boolean; uses_left: number }[] };

test('the owner ticks plan steps, approves with the passkey, sees the plan under Agents and withdraws it', { timeout: 120_000 }, async () => {
  const { tab: phone, agentId } = await ownerWithAgent(rig, { email: `plans.${Date.now()}@example.com`, agentName: 'nightly shopper' });
  const { page } = phone;
  const cookie = await sessionCookie(phone.context, server.baseUrl);

  const now = Math.floor(Date.now() / 1000);
  const submitted = await call<{ plan_id: string; txn_id: string }>(server, 'POST', '/api/v1/plans', {
    agent_id: agentId, agent_jwt: await createAgentJwt(key.privateKey, agentId), title: 'Weekly groceries', start_at: now + 60, end_at: now + 7200,
    steps: [
      { url: 'https://shop.example/cart', button: 'Add to cart', path: '/cart*', uses: 3 },
      { id: 'pay', url: 'https://shop.example/checkout', button: 'Pay now', path: '/checkout' },
      { id: 'save', url: 'https://shop.example/list', button: 'Save' },
    ],
  });
  expectStatus(submitted, 200, 'the agent submits its plan');

  await goTo(page, 'requests');
  const card = await requestCard(page, submitted.body.txn_id);
  await card.locator('.plan-step').nth(2).waitFor();
  assert.match((await card.locator('h3').textContent()) ?? '', /nightly shopper asks you to pre-approve a plan/);
  assert.equal(await card.locator('blockquote.action').textContent(), 'Weekly groceries');
  assert.equal(await card.locator('input[name="plan-step"]').count(), 2, 'the payment step has no tick box');
  assert.match((await card.locator('.plan-step.always-asks').textContent()) ?? '', /Pay now.*never pre-approved/s);
  await expectNoSidewaysScroll(page, 'the plan card');
  await card.locator('input[name="plan-step"][value="save"]').uncheck();
  await card.locator('button.approve').click();
  await card.locator('.outcome.ok').waitFor({ timeout: 15_000 });
  await expectNoError(page);

  const listed = await call<PlanView[]>(server, 'GET', `/api/plans?agent_id=${agentId}`, undefined, { cookie });
  expectStatus(listed, 200, 'the owner lists the plans');
  const plan = listed.body.find((p) => p.plan_id === submitted.body.plan_id);
  assert.equal(plan?.status, 'approved');
  assert.deepEqual(plan?.steps.map((s) => [s.id, s.approved, s.uses_left]), [['1', true, 3], ['pay', false, 0], ['save', false, 0]]);

  await goTo(page, 'agents');
  const planCard = page.locator(`#plans article[data-plan="${submitted.body.plan_id}"]`);
  await planCard.waitFor();
  assert.match((await planCard.textContent()) ?? '', /Approved.*Weekly groceries.*nightly shopper.*Add to cart · pre-approved, 3 uses left/s);
  await expectNoSidewaysScroll(page, 'the Plans list');
  await planCard.locator('button.withdraw').click();
  await page.locator(`#plans article[data-plan="${submitted.body.plan_id}"].withdrawn`).waitFor();
  assert.equal(await page.locator(`#plans article[data-plan="${submitted.body.plan_id}"] button.withdraw`).count(), 0);
  await expectNoError(page);
});
