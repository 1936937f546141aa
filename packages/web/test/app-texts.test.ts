import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createAgentJwt } from '@mandate/protocol';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../../server/test/helpers/browser.ts';
import { startServer, type ServerProcess } from '../../server/test/helpers/server-process.ts';
import { type AgentKey, agentKey } from './helpers/agent-runner.ts';
import { call, expectStatus } from '../../server/test/helpers/over-http.ts';
import {
  type OwnerTab, createAgent, expectNoError, goTo, openNotifications, openOwnerTab, requestCard, screenshot, sessionCookie, signUp,
} from './helpers/owner-app.ts';

// Issue 27, items 5, 6, 8, 9 and 14: what the owner app says after the fact, as a new user on a
// phone found it. The tests run in order and build on each other.

const SITE = 'shop.example';
/** The smallest phone the app is made for. */
const SMALL_PHONE = { width: 360, height: 640 } as const;

let server: ServerProcess;
let browser: Browser;
let key: AgentKey;
let tab: OwnerTab;
let agentId = '';
let stepTxn = '';
let waitingTxn = '';
const email = `texts.${Date.now()}@example.com`;

before(async () => {
  browser = await launchChromium('owner app texts');
  server = await startServer({ env: { DATABASE_URL: '' } });
  key = await agentKey();
});

after(async () => {
  await browser?.close();
  await server?.stop();
  key?.remove();
});

const jwt = () => createAgentJwt(key.privateKey, agentId);

test('opening /app signed out logs no console error at all, and "Create an account" is on the first screen of a 360x640 phone', { timeout: 60_000 }, async () => {
  tab = await openOwnerTab(browser, SMALL_PHONE);
  const { page } = tab;
  // openOwnerTab forgives 4xx "Failed to load resource" lines; a person opening the app must see none.
  const consoleErrors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  const meAnswers: number[] = [];
  page.on('response', (r) => {
    if (new URL(r.url()).pathname === '/api/me') meAnswers.push(r.status());
  });
  await page.goto(`${server.baseUrl}/app`);
  await page.locator('#signed-out').waitFor({ state: 'visible' });
  await page.waitForLoadState('networkidle');
  assert.deepEqual(consoleErrors, [], 'no console error');
  assert.deepEqual(meAnswers, [], 'GET /api/me is not asked while signed out');

  const jump = page.getByRole('button', { name: 'Create an account' });
  const inView = await jump.evaluate((n) => {
    const r = n.getBoundingClientRect();
    return r.top >= 0 && r.bottom <= window.innerHeight && r.height > 0;
  });
  assert.equal(inView, true, '"Create an account" shows without scrolling');
  await screenshot(page, 'signed-out-small');
  await jump.click();
  await page.waitForFunction(() => document.activeElement?.id === 'signup-email');
  const formInView = await page.locator('#signup-email').evaluate((n) => {
    const r = n.getBoundingClientRect();
    return r.top >= 0 && r.bottom <= window.innerHeight;
  });
  assert.equal(formInView, true, 'the sign-up form is brought into view, its email field focused');
  assert.deepEqual(tab.problems, []);
});

test('an added agent: the "is added" box under Add an agent', { timeout: 90_000 }, async () => {
  const { page } = tab;
  await signUp(page, server.baseUrl, email);
  await goTo(page, 'requests');
  await page.click('#passkey-setup-button');
  await page.locator('#passkey-setup').waitFor({ state: 'hidden' });
  agentId = await createAgent(page, 'Shop bot', key.publicJwk);
  await page.locator('#agent-created', { hasText: 'Shop bot is added.' }).waitFor({ state: 'visible' });
});

test('denying a step-up says the access stays and only that action was refused', { timeout: 90_000 }, async () => {
  const { page } = tab;
  const access = await call<{ txn_id: string }>(server, 'POST', '/api/v1/authz-requests', { agent_id: agentId, site: SITE, scopes: ['list'], agent_jwt: await jwt() });
  expectStatus(access, 200, 'access request');
  await goTo(page, 'requests');
  const card = await requestCard(page, access.body.txn_id);
  await card.getByRole('button', { name: 'Approve' }).click();
  await card.locator('.outcome.ok').waitFor();

  const step = await call<{ txn_id: string }>(server, 'POST', '/api/v1/stepup', { agent_id: agentId, site: SITE, action: 'pay 24.90 EUR', agent_jwt: await jwt() });
  expectStatus(step, 200, 'step-up');
  stepTxn = step.body.txn_id;
  const stepCard = await requestCard(page, stepTxn);
  await stepCard.getByRole('button', { name: 'Deny' }).click();
  await stepCard.locator('.outcome.denied').waitFor();
  assert.equal(await stepCard.locator('.outcome').textContent(),
    'Denied: Shop bot may not "pay 24.90 EUR" at shop.example. Its access there stays; revoke it under Access if you want it gone.');
  const grants = await call<{ site: string }[]>(server, 'GET', '/api/grants', undefined, { cookie: await sessionCookie(tab.context, server.baseUrl) });
  assert.ok(grants.body.some((g) => g.site === SITE), 'the grant is still there');
  await expectNoError(page);
});

test('the inbox shows how each request ended instead of "approve with your passkey"', { timeout: 60_000 }, async () => {
  const { page } = tab;
  const waiting = await call<{ txn_id: string }>(server, 'POST', '/api/v1/authz-requests', { agent_id: agentId, site: 'books.example', scopes: ['list'], agent_jwt: await jwt() });
  expectStatus(waiting, 200, 'access request');
  waitingTxn = waiting.body.txn_id;
  await requestCard(page, waitingTxn);
  const inbox = await openNotifications(page);
  const denied = inbox.locator(`li[data-type="approval"]`, { hasText: 'pay 24.90 EUR' });
  await denied.locator('.inbox-outcome', { hasText: 'Denied' }).waitFor();
  assert.doesNotMatch((await denied.textContent()) ?? '', /approve with your passkey/);
  const items = inbox.locator('li[data-type="approval"]');
  const outcomes = await items.locator('.inbox-outcome').allTextContents();
  assert.deepEqual(outcomes, ['Waiting for you: tap to open it', 'Denied', 'Approved'], 'newest first: waiting, the denied step-up, the approved access');
  await screenshot(page, 'inbox-outcomes');
  await expectNoError(page);
});

test('a revoked agent: its reputation says 0 because it is revoked, and the "is added" box goes', { timeout: 60_000 }, async () => {
  const { page } = tab;
  await goTo(page, 'agents');
  await page.locator('#agent-created').waitFor({ state: 'visible' });
  const card = page.locator(`#agents article[data-agent="${agentId}"]`);
  await card.getByRole('button', { name: 'Revoke Shop bot' }).click();
  await card.locator('.confirm-yes').click();
  const revoked = page.locator(`#agents article[data-agent="${agentId}"]`);
  await revoked.locator('.flag', { hasText: 'Revoked' }).waitFor();
  await revoked.locator('.agent-reputation', { hasText: '0 / 100 · it is 0 because you revoked this agent' }).waitFor();
  await page.locator('#agent-created').waitFor({ state: 'hidden' });
  // Its open request was cancelled with it: the inbox says so too.
  const inbox = await openNotifications(page);
  await inbox.locator('li[data-type="approval"]', { hasText: 'books.example' }).locator('.inbox-outcome', { hasText: 'Denied' }).waitFor();
  await expectNoError(page);
  assert.deepEqual(tab.problems, []);
});
