import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { createAgentJwt } from '@mandate/protocol';
import { launchChromium } from '../../server/test/helpers/browser.ts';
import { call, expectStatus } from '../../server/test/helpers/over-http.ts';
import { startServer, type ServerProcess } from '../../server/test/helpers/server-process.ts';
import { type AgentKey, agentKey } from './helpers/agent-runner.ts';
import { linkInLog, verifyLinkInLog } from '../../server/test/helpers/email-over-http.ts';
import {
  type OwnerTab, addPasskey, createAgent, expectNoError, expectNoSidewaysScroll, goTo, openNotifications, openOwnerTab, requestCard, screenshot,
  sessionCookie, signUp,
} from './helpers/owner-app.ts';

// Email verification in the owner app (issue 14, items 3 and 7), in Chromium on a 360 px phone: the
// banner and the Account card while the address is unverified, "Send link" and what it answers, the
// link followed from the server's log (the service runs without SMTP_URL, so mail goes to its log),
// a change of address that starts over, an approval card asking for the email, and the notice of
// the first passkey. The tests run in order and build on each other (one owner, Robin).

const SMALL_PHONE = { width: 360, height: 780 } as const;
const PASSWORD = 'correct horse battery';

let server: ServerProcess;
let browser: Browser;
let robin: OwnerTab;
let key: AgentKey;
let agentId = '';
let email = `robin.${Date.now()}@example.com`;
const tabs: OwnerTab[] = [];

before(async () => {
  browser = await launchChromium('email verification');
  // Without SMTP_URL each mail is written to the log (a warning), links included.
  server = await startServer({ env: { DATABASE_URL: '' }, healthyWithinMs: 90_000 });
  key = await agentKey();
});

after(async () => {
  for (const tab of tabs) await tab.context.close().catch(() => undefined);
  await browser?.close();
  await server?.stop();
  key?.remove();
});

async function newTab(): Promise<OwnerTab> {
  const tab = await openOwnerTab(browser, SMALL_PHONE);
  tabs.push(tab);
  return tab;
}

/** Follows the mailed link in another page of the same browser, as from a mail app, and confirms there. */
async function followLink(tab: OwnerTab, link: string): Promise<void> {
  const mail = await tab.context.newPage();
  try {
    await mail.goto(link);
    await mail.getByRole('button', { name: /verify/i }).click();
    await mail.getByText(/verified/i).first().waitFor();
  } finally {
    await mail.close();
  }
}

async function expectBadge(page: Page, text: 'Verified' | 'Not verified'): Promise<void> {
  await goTo(page, 'account');
  await page.locator('#email-badge', { hasText: new RegExp(`^${text}$`) }).waitFor({ timeout: 15_000 });
}

/** Sends a link from a "Send link" control in `scope` and answers the link the log then holds. */
async function sendLink(page: Page, scope: string, to: string): Promise<string> {
  const since = server.logs().length;
  const control = page.locator(scope).locator('.send-link');
  await control.getByRole('button', { name: 'Send link' }).click();
  await control.locator('.send-link-status.ok', { hasText: `Link sent to ${to}, valid 24 hours.` }).waitFor();
  return verifyLinkInLog(server, since, to);
}

test('a new owner sees "Verify your email" with the address; "Not now" hides it for this session in this tab only; the Account card says "Not verified"', { timeout: 90_000 }, async () => {
  robin = await newTab();
  const { page } = robin;
  await signUp(page, server.baseUrl, email, 'Robin Example');
  const banner = page.locator('#email-banner');
  await banner.waitFor({ state: 'visible' });
  assert.match((await banner.textContent()) ?? '', new RegExp(`Verify your email\\s*${email.replaceAll('.', '\\.')}`));
  await banner.getByRole('button', { name: 'Send link' }).waitFor();
  await expectNoSidewaysScroll(page, 'banner');
  await screenshot(page, 'email-banner');

  // The Account view has the same in its email card; the banner steps aside there.
  await expectBadge(page, 'Not verified');
  assert.equal(await banner.isVisible(), false, 'no banner on Account');
  assert.equal(await page.locator('#email-address').textContent(), email);
  await page.locator('#email-unverified').getByRole('button', { name: 'Send link' }).waitFor();
  await page.locator('#email-change summary', { hasText: 'Change your email address' }).waitFor();
  await expectNoSidewaysScroll(page, 'account email card');
  await page.locator('#email-card').scrollIntoViewIfNeeded();
  await screenshot(page, 'email-account-unverified');

  await goTo(page, 'requests');
  await banner.waitFor({ state: 'visible' });
  await banner.getByRole('button', { name: 'Not now' }).click();
  await banner.waitFor({ state: 'hidden' });
  await goTo(page, 'agents');
  assert.equal(await banner.isVisible(), false, 'dismissed on every view');
  await page.reload();
  await page.locator('#signed-in').waitFor({ state: 'visible' });
  assert.equal(await banner.isVisible(), false, 'still dismissed after a reload of this tab');
  // Another browser session of the same owner asks again.
  const other = await newTab();
  await other.page.goto(`${server.baseUrl}/app`);
  await other.page.locator('#signed-out').waitFor({ state: 'visible' });
  await other.page.fill('#signin-email', email);
  await other.page.fill('#signin-password', PASSWORD);
  await other.page.click('#signin-password-button');
  await other.page.locator('#email-banner').waitFor({ state: 'visible' });
  await other.context.close();
  // Signing out and in again in this tab asks again.
  await goTo(page, 'account');
  await page.click('#signout');
  await page.locator('#signed-out').waitFor({ state: 'visible' });
  await page.fill('#signin-email', email);
  await page.fill('#signin-password', PASSWORD);
  await page.click('#signin-password-button');
  await goTo(page, 'requests');
  await banner.waitFor({ state: 'visible' });
  assert.deepEqual(robin.problems, []);
});

test('"Send link" answers too often (429) and already verified (409) in words: "try again in 3 minutes"', { timeout: 60_000 }, async () => {
  const { page } = robin;
  const banner = page.locator('#email-banner');
  await page.route('**/api/email/send', (route) => route.fulfill({ status: 429, contentType: 'application/json', headers: { 'retry-after': '125' }, body: JSON.stringify({ detail: 'too many verification mails', retry_after: 125 }) }));
  await banner.getByRole('button', { name: 'Send link' }).click();
  const status = banner.locator('.send-link-status.error');
  await status.waitFor();
  assert.match((await status.textContent()) ?? '', /too often: try again in 3 minutes\./);
  await expectNoSidewaysScroll(page, 'banner 429');
  await page.unroute('**/api/email/send');
  await page.route('**/api/email/send', (route) => route.fulfill({ status: 409, contentType: 'application/json', body: JSON.stringify({ detail: 'email already verified' }) }));
  await banner.getByRole('button', { name: 'Send link' }).click();
  await banner.locator('.send-link-status.ok', { hasText: 'Your email address is already verified.' }).waitFor();
  await page.unroute('**/api/email/send');
  // The service itself still says "not verified": the banner stays.
  assert.equal(await banner.isVisible(), true);
  await expectNoError(page);

  // For real: another new owner asks once too often (the service's limit per hour), in the Account card.
  const other = await newTab();
  const address = `often.${Date.now()}@example.com`;
  await signUp(other.page, server.baseUrl, address);
  await goTo(other.page, 'account');
  const control = other.page.locator('#email-unverified .send-link');
  const refused = control.locator('.send-link-status.error');
  for (let i = 0; i < 20 && !(await refused.isVisible()); i++) {
    await control.getByRole('button', { name: 'Send link' }).click();
    await control.locator('.send-link-status:not([hidden])').waitFor();
    await control.getByRole('button', { name: 'Send link' }).waitFor();
  }
  assert.match((await refused.textContent()) ?? '', /^A link was asked for too often: try again in \d+ minutes?\. A link already sent stays valid/);
  await expectNoSidewaysScroll(other.page, 'account card 429');
  assert.deepEqual(other.problems, []);
});

test('"Send link" mails the link (in the log without SMTP); following it verifies: the badge turns "Verified" and the banner goes, without a reload', { timeout: 90_000 }, async () => {
  const { page } = robin;
  await goTo(page, 'requests');
  const link = await sendLink(page, '#email-banner', email);
  await expectNoSidewaysScroll(page, 'banner, link sent');
  await screenshot(page, 'email-link-sent');
  assert.ok(link.startsWith(server.baseUrl), `the link is on the service's address: ${link}`);

  await followLink(robin, link);
  await page.locator('#email-banner').waitFor({ state: 'hidden', timeout: 15_000 });
  await expectBadge(page, 'Verified');
  assert.equal(await page.locator('#email-unverified').isVisible(), false, 'no "Send link" once verified');
  await page.reload();
  await expectBadge(page, 'Verified');
  await goTo(page, 'requests');
  assert.equal(await page.locator('#email-banner').isVisible(), false);
  const me = await call<{ email_verified: boolean }>(server, 'GET', '/api/me', undefined, { cookie: await sessionCookie(robin.context, server.baseUrl) });
  assert.equal(me.body.email_verified, true);
  await expectNoError(page);
  assert.deepEqual(robin.problems, []);
});

test('an approval card asking for the email says, once the address is changed, that it cannot be shared until verified, and sends the link from the card', { timeout: 120_000 }, async () => {
  const { page } = robin;
  // The first passkey of a verified owner: the notice says an undo link was mailed, and it was; no "Send link".
  const beforePasskey = server.logs().length;
  await addPasskey(page, 'Robin\'s phone');
  await linkInLog(server, beforePasskey, /\/api\/passkeys\/undo\?token=[A-Za-z0-9._~%-]+/, 'the undo link of the first passkey');
  await openNotifications(page);
  const notice = page.locator('#inbox li[data-type="security"]').first();
  await notice.waitFor();
  assert.match((await notice.locator('.inbox-body').textContent()) ?? '', new RegExp(`undo link we mailed to ${email.replaceAll('.', '\\.')}`));
  assert.equal(await notice.locator('.inbox-verify').isVisible(), false, 'verified: nothing to ask');
  agentId = await createAgent(page, 'shopper', key.publicJwk);
  const ask = await call<{ txn_id: string }>(server, 'POST', '/api/v1/authz-requests', { agent_id: agentId, site: 'shop.example', scopes: ['list'], user_info: ['user:email'], agent_jwt: await createAgentJwt(key.privateKey, agentId) });
  expectStatus(ask, 200, 'access request for the verified email');
  await goTo(page, 'requests');
  const card = await requestCard(page, ask.body.txn_id);
  const note = card.locator('.email-unverified-share');
  assert.equal(await note.isVisible(), false, 'verified: nothing to say');

  // A new address: a wrong password is refused in words, the right one changes it and starts over.
  await goTo(page, 'account');
  await page.locator('#email-change summary').click();
  const changed = `robin.new.${Date.now()}@example.com`;
  await page.fill('#email-new', changed);
  await page.fill('#email-password', 'not my password');
  await page.click('#email-change-button');
  const refused = page.locator('#email-form-error');
  await refused.waitFor();
  assert.match((await refused.textContent()) ?? '', /^[A-Z].*\./s);
  assert.equal(await page.locator('#email-address').textContent(), email, 'not changed');
  await page.fill('#email-password', PASSWORD);
  await page.click('#email-change-button');
  await expectBadge(page, 'Not verified');
  assert.equal(await page.locator('#email-address').textContent(), changed);
  await page.waitForFunction((e) => (document.getElementById('whoami-name')?.textContent ?? '').includes(e), changed);
  await expectNoError(page);
  email = changed;

  await goTo(page, 'requests');
  await page.locator('#email-banner').waitFor({ state: 'visible' });
  await note.waitFor({ state: 'visible' });
  assert.match((await note.textContent()) ?? '', /Your email address cannot be shared until you verify it\./);
  await note.evaluate((n) => n.scrollIntoView({ block: 'center' }));
  await expectNoSidewaysScroll(page, 'card with the email note');
  await screenshot(page, 'email-approval-card');
  const link = await sendLink(page, `#pending article[data-txn="${ask.body.txn_id}"] .email-unverified-share`, changed);
  await followLink(robin, link);
  await note.waitFor({ state: 'hidden', timeout: 15_000 });
  await card.getByRole('button', { name: 'Approve' }).click();
  await card.locator('.outcome.ok').waitFor();
  await expectNoError(page);
  assert.deepEqual(robin.problems, []);
});

test('the first passkey of an owner whose email is unverified: the Security notice reads well and offers "Send link"', { timeout: 90_000 }, async () => {
  const tab = await newTab();
  const { page } = tab;
  const address = `first.${Date.now()}@example.com`;
  await signUp(page, server.baseUrl, address);
  await addPasskey(page, 'First phone');
  await page.locator('#unread-count').waitFor({ state: 'visible', timeout: 15_000 });
  await openNotifications(page);
  const item = page.locator('#inbox li[data-type="security"]').first();
  await item.waitFor();
  assert.equal(await item.locator('.inbox-kind').textContent(), 'Security');
  assert.match((await item.locator('.inbox-title').textContent()) ?? '', /passkey/i);
  const prompt = item.locator('.inbox-verify');
  await prompt.waitFor({ state: 'visible' });
  await item.evaluate((n) => n.scrollIntoView({ block: 'center' }));
  await expectNoSidewaysScroll(page, 'security notice');
  await screenshot(page, 'email-security-notice');
  const link = await sendLink(page, '#inbox li[data-type="security"] .inbox-verify', address);

  // Verifying hides the prompt where it stands, and the undo link the notice could not promise is mailed now.
  const beforeVerify = server.logs().length;
  await followLink(tab, link);
  await prompt.waitFor({ state: 'hidden', timeout: 15_000 });
  await linkInLog(server, beforeVerify, /\/api\/passkeys\/undo\?token=[A-Za-z0-9._~%-]+/, 'the undo link mailed once verified');

  // The account's own history says it in words.
  await goTo(page, 'activity');
  const added = page.locator('#activity li[data-action="passkey.first_added"]');
  await added.waitFor();
  assert.match((await added.textContent()) ?? '', /Your first passkey "First phone" was added.*no mail: your email address was not verified yet/);
  await page.locator('#activity li[data-action="email.verified"]', { hasText: `You verified your email address ${address}` }).waitFor();
  await expectNoError(page);
  assert.deepEqual(tab.problems, []);
});
