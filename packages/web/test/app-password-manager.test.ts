import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { createAgentJwt } from '@mandate/protocol';
import { launchChromium } from '../../server/test/helpers/browser.ts';
import { call, expectStatus } from '../../server/test/helpers/over-http.ts';
import { serverWithStore } from '../../server/test/helpers/server-with-store.ts';
import { type AgentKey, agentKey } from './helpers/agent-runner.ts';
import { createAgent, expectNoError, expectNoSidewaysScroll, goTo, openOwnerTab, signUp } from './helpers/owner-app.ts';

// The password-manager switch in the owner app (decisions §17), on a phone: an agent whose browser
// runs on its operator's computers shows "Password manager: Off" with "Turn on" (confirmed in the
// page); the agent's own status follows, and so does Activity. Other agents show no switch. The
// agent is tied to an operator in the server's database, as the operator API will create it.

const service = serverWithStore('sqlite', 'mandate-web-pwm-');
let browser: Browser;
let key: AgentKey;

before(async () => {
  browser = await launchChromium('owner app: password manager');
  key = await agentKey();
});

after(async () => {
  await browser?.close();
  key?.remove();
});

async function agentSays(agentId: string): Promise<string> {
  const node = service.node!;
  const r = await call<{ password_manager: string }>(node, 'GET', `/api/v1/agent-status?agent_id=${agentId}`, undefined, { 'x-agent-jwt': await createAgentJwt(key.privateKey, agentId) });
  return expectStatus(r, 200, 'agent status').body.password_manager;
}

test('the owner turns the password manager on and off for an operator-run agent', { timeout: 120_000 }, async () => {
  const node = service.node!;
  const tab = await openOwnerTab(browser);
  const { page } = tab;
  await signUp(page, node.baseUrl, `owner.${Date.now()}@example.com`);
  await page.locator('#passkey-setup').waitFor({ state: 'visible' });
  await page.click('#passkey-setup-button');
  await page.locator('#passkey-setup').waitFor({ state: 'hidden' });
  const agentId = await createAgent(page, 'shopper', key.publicJwk);
  const card = page.locator(`#agents article[data-agent="${agentId}"]`);
  assert.equal(await card.locator('.password-manager').count(), 0, 'an agent you added has no switch');

  const store = await service.openStore();
  try {
    await store.operators.attachAgent(agentId, { operatorId: 'op_test', connectionId: 'cn_test', browser: 'operator' });
  } finally {
    await store.close();
  }
  await page.reload();
  await goTo(page, 'agents');
  await card.locator('.password-manager.off').waitFor();
  assert.match((await card.locator('.password-manager-state').textContent()) ?? '', /^Off: .*take over/);
  assert.equal(await agentSays(agentId), 'off');
  await expectNoSidewaysScroll(page, 'an agent card with the password-manager switch');

  await card.locator('button.password-manager-on').click();
  assert.match((await card.locator('.confirm-question').textContent()) ?? '', /operator's computers/);
  await card.locator('button.confirm-no').click();
  assert.equal(await agentSays(agentId), 'off', 'cancel changes nothing');
  await card.locator('button.password-manager-on').click();
  await card.locator('button.confirm-yes').click();
  await card.locator('.password-manager.on').waitFor();
  await expectNoError(page);
  assert.equal(await agentSays(agentId), 'on');

  await card.locator('button.password-manager-off').click();
  await card.locator('.password-manager.off').waitFor();
  assert.equal(await agentSays(agentId), 'off');

  await goTo(page, 'activity');
  const records = page.locator('#activity li[data-action="agent.password_manager"]');
  await records.nth(1).waitFor();
  assert.match((await records.nth(0).textContent()) ?? '', /You turned the password manager off for shopper/);
  assert.match((await records.nth(1).textContent()) ?? '', /You turned the password manager on for shopper/);
  assert.deepEqual(tab.problems, []);
  await tab.context.close();
});
