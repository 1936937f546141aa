import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createAgentJwt, detailsDigestOf } from '@mandate/protocol';
import type { ServerProcess } from '../../server/test/helpers/server-process.ts';
import type { AgentKey } from './helpers/agent-runner.ts';
import { call, expectStatus } from '../../server/test/helpers/over-http.ts';
import { storedReceipt } from '../../server/test/helpers/stored-receipt.ts';
import { until } from '../../server/test/helpers/until.ts';
import { type OwnerAppRig, type OwnerTab, expectNoError, expectNoSidewaysScroll, goTo, ownerWithAgent, requestCard, startOwnerAppRig } from './helpers/owner-app.ts';

// Agent approvals and approval modes in the owner app (decisions §19), on a phone (390 px): the card
// shows the action, label, amount, page, hosts and category and is approved with the passkey or
// denied; the agent's card holds its approval modes (default, per-site rows, add and remove).

let rig: OwnerAppRig;
let server: ServerProcess;
let key: AgentKey;
let phone: OwnerTab;
let agentId = '';

before(async () => {
  rig = await startOwnerAppRig('owner app');
  ({ server, key } = rig);
});

after(() => rig?.close());

async function file(site: string, action: string, details: Record<string, unknown>) {
  const r = await call<{ txn_id: string; status: string }>(server, 'POST', '/api/v1/agent-approval', { agent_id: agentId, agent_jwt: await createAgentJwt(key.privateKey, agentId), site, action, details });
  expectStatus(r, 200, 'agent approval');
  return r.body;
}

const pollStatus = (txn: string) => until('an answer', async () => {
  const r = await call<{ status: string }>(server, 'GET', `/api/v1/authz-requests/${txn}`);
  return r.body.status === 'pending' ? undefined : r.body.status;
}, { ms: 20_000, everyMs: 200 });

test('an agent approval card shows what the agent wants, approved with the passkey or denied', { timeout: 120_000 }, async () => {
  ({ tab: phone, agentId } = await ownerWithAgent(rig, { email: `owner.${Date.now()}@example.com`, agentName: 'shopper' }));
  const { page } = phone;

  const pay = await file('shop.example', 'checkout:submit', { label: 'Pay <b>now</b>', amount: '42.00 EUR', page: 'Checkout', host: 'shop.example', target_host: 'pay.example', card_fields: true });
  assert.equal(pay.status, 'pending');
  await goTo(page, 'requests');
  const card = await requestCard(page, pay.txn_id);
  assert.equal(await card.locator('.kind').textContent(), 'Approve an action');
  assert.match((await card.locator('h3').textContent()) ?? '', /shopper asks before acting on shop\.example/);
  assert.match((await card.locator('.category').textContent()) ?? '', /^Money/);
  const details = (await card.locator('.agent-approval-details').textContent()) ?? '';
  for (const part of ['checkout:submit', 'Pay <b>now</b>', '42.00 EUR', 'Checkout', 'pay.example', 'card fields']) assert.ok(details.includes(part), `${part} in ${details}`);
  assert.equal(await card.locator('.agent-approval-details b').count(), 0, 'the label is text, not markup');
  await card.locator('.notice.warn', { hasText: 'another site: pay.example' }).waitFor();
  await expectNoSidewaysScroll(page, 'an agent approval card');
  await card.locator('button.approve').click();
  await card.locator('.outcome.ok').waitFor();
  assert.equal(await pollStatus(pay.txn_id), 'approved');

  const del = await file('shop.example', 'click', { label: 'Delete draft' });
  const second = await requestCard(page, del.txn_id);
  assert.match((await second.locator('.category').textContent()) ?? '', /Deletes/);
  await second.locator('button.deny').click();
  assert.equal(await pollStatus(del.txn_id), 'denied');
  await expectNoError(page);
});

test('an agent approval bound to details shows the summary as written and says so; approved with the passkey, the service keeps the receipt', { timeout: 60_000 }, async () => {
  const { page } = phone;
  const summary = 'Order 2 items for 31.00 EUR:\n- <i>Tea</i> x1\n- Mug & saucer x1';
  const digest = detailsDigestOf({ cart: [{ id: 'tea', qty: 1 }, { id: 'mug', qty: 1 }], total: '31.00 EUR' });
  const order = await file('shop.example', 'checkout:submit', { label: 'Place order', summary, digest });
  assert.equal(order.status, 'pending');
  await goTo(page, 'requests');
  const card = await requestCard(page, order.txn_id);
  assert.match((await card.locator('.agent-approval-details').textContent()) ?? '', /Place order/);
  const shown = card.locator('blockquote.details-summary');
  assert.equal(await shown.innerText(), summary, 'as written, lines kept');
  assert.equal(await card.locator('blockquote.details-summary *').count(), 0, 'text, not markup');
  await card.locator('p.hint', { hasText: 'This approval is bound to exactly these details.' }).waitFor();
  await expectNoSidewaysScroll(page, 'an agent approval card with a summary');
  await card.locator('button.approve').click();
  await card.locator('.outcome.ok').waitFor();
  assert.equal(await pollStatus(order.txn_id), 'approved');
  const receipt = storedReceipt(rig.dataDir, order.txn_id);
  assert.deepEqual([receipt?.action, receipt?.details_digest], ['checkout:submit', digest], 'the receipt is bound to the details');

  // Without details the card has no such block.
  const plain = await file('shop.example', 'click', { label: 'Delete draft' });
  const second = await requestCard(page, plain.txn_id);
  assert.equal(await second.locator('.bound-details').count(), 0);
  await second.locator('button.deny').click();
  assert.equal(await pollStatus(plain.txn_id), 'denied');
  await expectNoError(page);
});

test('approval modes on the agent card: default, add a site, remove it; a smart default approves a low action at once', { timeout: 90_000 }, async () => {
  const { page } = phone;
  await goTo(page, 'agents');
  const card = page.locator(`#agents article[data-agent="${agentId}"]`);
  await card.locator('details.approval-modes summary').click();
  const modes = card.locator('details.approval-modes');
  await modes.locator('select[name="default-mode"]').waitFor();
  assert.equal(await modes.locator('select[name="default-mode"]').inputValue(), 'ask');
  await modes.locator('select[name="default-mode"]').selectOption('smart');
  const saved = page.waitForResponse((r) => r.url().endsWith('/approval-modes') && r.request().method() === 'POST');
  await modes.locator('button.save-default').click();
  assert.equal((await saved).status(), 200);
  // Agent credentials never reach the modes (owner session only).
  expectStatus(await call(server, 'GET', `/api/agents/${agentId}/approval-modes`, undefined, { authorization: `Bearer ${await createAgentJwt(key.privateKey, agentId)}` }), 401, 'agent JWT refused');

  await modes.locator('input[name="mode-site"]').fill('news.example');
  await modes.locator('select[name="mode"]').selectOption('allow');
  await modes.locator('input[name="hourly-limit"]').fill('7');
  await modes.locator('button.add-mode').click();
  await modes.locator('li.mode-row[data-site="news.example"]', { hasText: 'allow, at most 7 an hour' }).waitFor();
  await expectNoSidewaysScroll(page, 'approval modes');

  // Smart default: a low action elsewhere is approved at once; allow on news.example approves a post.
  assert.equal((await file('other.example', 'click', { label: 'Next page' })).status, 'approved');
  assert.equal((await file('news.example', 'click', { label: 'Post comment' })).status, 'approved');
  assert.equal((await file('other.example', 'click', { label: 'Buy now' })).status, 'pending');

  await modes.locator('button.remove-mode').click();
  await modes.locator('li.mode-row').waitFor({ state: 'detached' });
  assert.equal((await file('news.example', 'click', { label: 'Post comment' })).status, 'pending', 'back to the smart default');
  await expectNoError(page);
});
