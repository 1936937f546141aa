import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { createAgentJwt } from '@mandate/protocol';
import { launchChromium } from '../../server/test/helpers/browser.ts';
import { call, expectStatus } from '../../server/test/helpers/over-http.ts';
import { startServer, type ServerProcess } from '../../server/test/helpers/server-process.ts';
import { type AgentKey, agentKey } from './helpers/agent-runner.ts';
import {
  DESKTOP, type OwnerTab, addPasskey, createAgent, expectNoError, expectNoSidewaysScroll, expectSignedIn, goTo, openOwnerTab, requestCard, screenshot,
  signInWithPassword, signUp,
} from './helpers/owner-app.ts';

// What a new user trips over, in Chromium with a virtual passkey authenticator: signing in with a
// passkey without typing an email (button and autofill), being told before pressing Approve that a
// computer signed in with a password is not where the passkey is (and how to add it), empty states
// that know what happened before, and revocation promised as it really works.

const SMALL_PHONE = { width: 360, height: 780 } as const;

let server: ServerProcess;
let browser: Browser;
const keys: AgentKey[] = [];
const tabs: OwnerTab[] = [];

before(async () => {
  browser = await launchChromium('first use');
  server = await startServer({ env: { DATABASE_URL: '' } });
});

after(async () => {
  for (const tab of tabs) await tab.context.close().catch(() => undefined);
  for (const key of keys) key.remove();
  await browser?.close();
  await server?.stop();
});

async function tab(viewport: { width: number; height: number } = SMALL_PHONE): Promise<OwnerTab> {
  const t = await openOwnerTab(browser, viewport);
  tabs.push(t);
  return t;
}

const newEmail = (prefix: string): string => `${prefix}.${Date.now()}@example.com`;

/** An agent added in the page, and a function that files an access request for it. */
async function agentOf(page: Page, name = 'helper'): Promise<{ id: string; ask: (site?: string) => Promise<string> }> {
  const key = await agentKey();
  keys.push(key);
  const id = await createAgent(page, name, key.publicJwk);
  return {
    id,
    async ask(site = 'shop.example') {
      const res = await call<{ txn_id: string }>(server, 'POST', '/api/v1/authz-requests', { agent_id: id, site, scopes: ['list'], agent_jwt: await createAgentJwt(key.privateKey, id) });
      expectStatus(res, 200, 'access request');
      return res.body.txn_id;
    },
  };
}

/** Centres `selector` and writes the screenshot. */
async function shoot(page: Page, selector: string, name: string): Promise<void> {
  await page.locator(selector).first().evaluate((n) => n.scrollIntoView({ block: 'center' }));
  await expectNoSidewaysScroll(page, name);
  await screenshot(page, name);
}

test('a passkey signs in without an email: with the button, and from the email field\'s suggestions when the app opens signed out', { timeout: 120_000 }, async () => {
  const { page, problems } = await tab();
  // What the page asks the browser for, and which sign-in options it fetches.
  await page.addInitScript(() => {
    const calls: string[] = [];
    (window as unknown as { passkeyCalls: string[] }).passkeyCalls = calls;
    const get = navigator.credentials.get.bind(navigator.credentials);
    navigator.credentials.get = (options?: CredentialRequestOptions) => {
      calls.push(String(options?.mediation ?? 'optional'));
      return get(options);
    };
  });
  const optionUrls: string[] = [];
  page.on('request', (r) => {
    if (r.url().includes('/api/webauthn/login/options')) optionUrls.push(r.url());
  });
  const email = newEmail('nomail');
  await signUp(page, server.baseUrl, email);
  await addPasskey(page, 'This phone');

  await page.click('#signout');
  await page.locator('#signed-out').waitFor({ state: 'visible' });
  await shoot(page, '#signin-form', 'first-use-sign-in');
  assert.equal(await page.inputValue('#signin-email'), '', 'nothing typed');
  const before = optionUrls.length;
  await page.click('#signin-passkey-button');
  await expectSignedIn(page, email);
  await expectNoError(page);
  const asked = optionUrls.slice(before);
  assert.equal(asked.length, 1);
  assert.equal(new URL(asked[0] ?? '').searchParams.has('email'), false, 'no email sent');

  // Opening the app signed out: the email field offers the passkey (conditional mediation). The
  // virtual authenticator plays the person choosing it: signed in without typing or pressing anything.
  await page.click('#signout');
  await page.locator('#signed-out').waitFor({ state: 'visible' });
  const calls = () => page.evaluate(() => (window as unknown as { passkeyCalls: string[] }).passkeyCalls);
  await page.reload();
  await expectSignedIn(page, email);
  assert.deepEqual(await calls(), ['conditional'], 'one autofill request, and nothing else');
  assert.equal(new URL(optionUrls.at(-1) ?? '').searchParams.has('email'), false);
  await expectNoError(page);
  assert.deepEqual(problems, []);
});

test('signed in with a password on a computer without the passkey: before Approve, the card says to approve on the phone and how to add this computer; the phone is told nothing of the sort', { timeout: 120_000 }, async () => {
  const phone = await tab();
  const email = newEmail('elsewhere');
  await signUp(phone.page, server.baseUrl, email);
  await addPasskey(phone.page, 'My phone');
  const agent = await agentOf(phone.page);
  const txn = await agent.ask();

  const computer = await tab(DESKTOP);
  await signInWithPassword(computer.page, server.baseUrl, email);
  await goTo(computer.page, 'requests');
  const card = await requestCard(computer.page, txn);
  const advice = card.locator('.notice.elsewhere');
  await advice.waitFor({ state: 'visible' });
  const text = (await advice.textContent()) ?? '';
  assert.match(text, /Approve on the phone that holds your passkey\./);
  assert.match(text, /You signed in here with your password/);
  assert.match(text, /add it under Account/);
  assert.equal(await card.locator('.card-error').isVisible(), false, 'said before anything failed');
  assert.equal(await card.getByRole('button', { name: 'Approve' }).isEnabled(), true, 'a phone the browser reaches may still answer');
  await computer.page.setViewportSize(SMALL_PHONE);
  await shoot(computer.page, `#pending article[data-txn="${txn}"]`, 'first-use-approve-elsewhere');

  // How to add this computer: a passkey sign-in first (with the phone), said up front.
  await card.getByRole('link', { name: 'add it under Account' }).click();
  await computer.page.locator('section.view[data-view="account"]').waitFor({ state: 'visible' });
  const reauth = computer.page.locator('#passkey-reauth');
  await reauth.waitFor({ state: 'visible' });
  assert.match((await reauth.textContent()) ?? '', /use a phone in the prompt and scan the code/);
  assert.equal(await computer.page.locator('#passkey-form').isVisible(), false, 'no form that would be refused');
  await shoot(computer.page, '#passkey-reauth', 'first-use-add-this-device');
  await computer.page.setViewportSize(DESKTOP);

  // The phone holds the passkey: no such advice, also after signing in there with the password.
  await goTo(phone.page, 'requests');
  const phoneCard = await requestCard(phone.page, txn);
  assert.equal(await phoneCard.locator('.notice.elsewhere').isVisible(), false);
  // In the page (opening the app anew would offer the passkey as autofill, which the virtual authenticator takes).
  await goTo(phone.page, 'account');
  await phone.page.click('#signout');
  await phone.page.locator('#signed-out').waitFor({ state: 'visible' });
  await phone.page.fill('#signin-email', email);
  await phone.page.fill('#signin-password', 'correct horse battery');
  await phone.page.click('#signin-password-button');
  await expectSignedIn(phone.page, email);
  await goTo(phone.page, 'requests');
  const again = await requestCard(phone.page, txn);
  assert.equal(await again.locator('.notice.elsewhere').isVisible(), false, 'a passkey was made here');
  await again.getByRole('button', { name: 'Approve' }).click();
  await again.locator('.outcome.ok').waitFor();
  await expectNoError(phone.page);
  assert.deepEqual(phone.problems, [], 'phone');
  assert.deepEqual(computer.problems, [], 'computer');
});

test('empty states follow what exists: no agent yet, no access yet, access that ended; revoking says when sites refuse', { timeout: 120_000 }, async () => {
  const { page, problems } = await tab();
  await signUp(page, server.baseUrl, newEmail('empty'));

  await goTo(page, 'requests');
  await page.locator('#pending-empty-no-agents', { hasText: 'You have no agent yet.' }).waitFor();
  assert.equal(await page.locator('#pending-empty-agents').isVisible(), false);
  await goTo(page, 'access');
  await page.locator('#grants-empty', { hasText: 'Add an agent first' }).waitFor();

  await goTo(page, 'requests');
  await page.click('#passkey-setup-button');
  await page.locator('#passkey-setup').waitFor({ state: 'hidden' });
  const agent = await agentOf(page);
  await goTo(page, 'requests');
  await page.locator('#pending-empty-agents', { hasText: 'When one of your agents asks' }).waitFor();
  assert.equal(await page.locator('#pending-empty-no-agents').isVisible(), false, 'an agent exists: no "add one"');
  await goTo(page, 'access');
  await page.locator('#grants-empty', { hasText: 'You have not given any access yet.' }).waitFor();

  const txn = await agent.ask();
  await goTo(page, 'requests');
  const card = await requestCard(page, txn);
  await card.getByRole('button', { name: 'Approve' }).click();
  await card.locator('.outcome.ok').waitFor();

  await goTo(page, 'access');
  const grant = page.locator('#grants article', { hasText: 'shop.example' });
  await grant.getByRole('button', { name: 'Revoke helper at shop.example' }).click();
  const question = (await grant.locator('.confirm-question').textContent()) ?? '';
  assert.match(question, /at once if it checks with Mandate; if it checks passes itself, within a second while connected to Mandate's revocation stream, within a minute otherwise/);
  assert.doesNotMatch(question, /stops working at once/);
  await grant.locator('.confirm-yes').click();
  await grant.waitFor({ state: 'detached' });
  assert.match((await page.locator('#message').textContent()) ?? '', /within a second while connected to Mandate's revocation stream, within a minute otherwise/);
  const ended = page.locator('#grants-empty');
  await ended.locator('#grants-empty-title', { hasText: 'No access is live now.' }).waitFor();
  assert.match((await ended.textContent()) ?? '', /What you gave before has ended/);
  await shoot(page, '#grants-empty', 'first-use-access-ended');

  // From the history, not from what this page saw: the same after opening the app again.
  await page.reload();
  await goTo(page, 'access');
  await page.locator('#grants-empty-title', { hasText: 'No access is live now.' }).waitFor();

  await goTo(page, 'agents');
  const agentCard = page.locator(`#agents article[data-agent="${agent.id}"]`);
  await agentCard.getByRole('button', { name: 'Revoke helper' }).click();
  assert.match((await agentCard.locator('.confirm-question').textContent()) ?? '', /^Revoke helper\? Sites that check with Mandate refuse it at once, sites that check passes themselves within a second while connected to Mandate's revocation stream, within a minute otherwise\./);
  await agentCard.locator('.confirm-no').click();
  await expectNoError(page);
  assert.deepEqual(problems, []);
});
