import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { createAgentJwt } from '@mandate/protocol';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../../server/test/helpers/browser.ts';
import { startServer, type ServerProcess } from '../../server/test/helpers/server-process.ts';
import { type AgentKey, agentKey } from './helpers/agent-runner.ts';
import { call, expectStatus } from '../../server/test/helpers/over-http.ts';
import { verifyEmail } from '../../server/test/helpers/email-over-http.ts';
import {
  DESKTOP, PHONE, type OwnerTab, type View, createAgent, expectNoError, expectNoSidewaysScroll, goTo, openNotifications, openOwnerTab, requestCard, screenshot, sessionCookie, signInWithPassword, signUp,
} from './helpers/owner-app.ts';

// Screenshots of the main screens at a phone's 390x844 and a desktop's 1280x800, saved under
// artifacts/screenshots/ for people to look at, with an owner who has an agent, a grant, open
// requests and some history. Each screen is also checked for sideways scrolling and page errors.

let server: ServerProcess;
let browser: Browser;
let key: AgentKey;
let agentId = '';
const email = `screens.${Date.now()}@example.com`;
const tabs: OwnerTab[] = [];

before(async () => {
  browser = await launchChromium('owner app screenshots');
  server = await startServer({ env: { DATABASE_URL: '' } });
  key = await agentKey();
});

after(async () => {
  await browser?.close();
  await server?.stop();
  key?.remove();
});

const jwt = () => createAgentJwt(key.privateKey, agentId);

async function ask(site: string, scopes: string[], userInfo: string[] = []): Promise<string> {
  const res = await call<{ txn_id: string }>(server, 'POST', '/api/v1/authz-requests', { agent_id: agentId, site, scopes, user_info: userInfo, agent_jwt: await jwt() });
  expectStatus(res, 200, 'access request');
  return res.body.txn_id;
}

async function shoot(tab: OwnerTab, name: string): Promise<void> {
  const path = await screenshot(tab.page, name);
  assert.ok(statSync(path).size > 5000, `${path} holds a picture`);
  await expectNoSidewaysScroll(tab.page, name);
}

test('the sign-in screen at phone and desktop size', { timeout: 60_000 }, async () => {
  for (const viewport of [PHONE, DESKTOP]) {
    const tab = await openOwnerTab(browser, viewport);
    tabs.push(tab);
    await tab.page.goto(`${server.baseUrl}/app`);
    await tab.page.locator('#signed-out').waitFor({ state: 'visible' });
    await shoot(tab, 'sign-in');
  }
});

test('the signed-in screens (requests with cards, agents, access, activity, account, notifications) at phone and desktop size', { timeout: 180_000 }, async () => {
  const phone = await openOwnerTab(browser, PHONE);
  tabs.push(phone);
  await signUp(phone.page, server.baseUrl, email, 'Robin Example');
  // The requests below ask for the email, offered only once verified (decisions §25); the screens show a settled account.
  await verifyEmail(server, await sessionCookie(phone.context, server.baseUrl), email);
  await goTo(phone.page, 'requests');
  await phone.page.click('#passkey-setup-button');
  await phone.page.locator('#passkey-setup').waitFor({ state: 'hidden' });
  agentId = await createAgent(phone.page, 'shopping assistant', key.publicJwk);

  // One approved access (a grant with history), then two open requests.
  const first = await ask('shop.example', ['list', 'orders:read', 'cart:write'], ['user:email']);
  await goTo(phone.page, 'requests');
  const card = await requestCard(phone.page, first);
  await card.getByRole('checkbox', { name: 'cart:write' }).uncheck();
  await card.getByRole('button', { name: 'Approve' }).click();
  await card.locator('.outcome.ok').waitFor();
  expectStatus(await call(server, 'POST', '/api/v1/token', { agent_id: agentId, site: 'shop.example', agent_jwt: await jwt() }), 200, 'first pass');
  expectStatus(await call(server, 'POST', '/api/v1/agent-status', { agent_id: agentId, agent_jwt: await jwt(), status: 'comparing prices for a desk lamp', site: 'shop.example' }), 200, 'status');
  const second = await ask('tickets.example', ['search', 'book'], ['user:name', 'user:email']);
  const step = await call<{ txn_id: string }>(server, 'POST', '/api/v1/stepup', { agent_id: agentId, site: 'shop.example', action: 'pay 24.90 EUR for order 1042', agent_jwt: await jwt() });
  expectStatus(step, 200, 'step-up');

  const desktop = await openOwnerTab(browser, DESKTOP);
  tabs.push(desktop);
  await signInWithPassword(desktop.page, server.baseUrl, email);

  for (const tab of [phone, desktop]) {
    await goTo(tab.page, 'requests');
    await requestCard(tab.page, second);
    await requestCard(tab.page, step.body.txn_id);
    // Let the passing first card finish leaving, so the screen shows what waits.
    await tab.page.locator(`#pending article[data-txn="${first}"]`).waitFor({ state: 'detached', timeout: 15_000 });
    await shoot(tab, 'requests');
    const views: [View, string][] = [['agents', '#agents article .agent-reputation:not(:text("Loading…"))'], ['access', '#grants article'], ['activity', '#activity li'], ['account', '#devices li']];
    for (const [view, ready] of views) {
      await goTo(tab.page, view);
      await tab.page.locator(ready).first().waitFor();
      await shoot(tab, view);
    }
    await openNotifications(tab.page);
    await tab.page.locator('#inbox li').first().waitFor();
    await shoot(tab, 'notifications');
    await expectNoError(tab.page);
  }
});

test('no script errors, CSP violations or server errors while taking them', async () => {
  for (const tab of tabs) {
    assert.deepEqual(tab.problems, []);
    await tab.context.close();
  }
});
