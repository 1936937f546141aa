import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../../server/test/helpers/browser.ts';
import { startServer, type ServerProcess } from '../../server/test/helpers/server-process.ts';
import { linkInLog, verifyEmail } from '../../server/test/helpers/email-over-http.ts';
import { type OwnerTab, expectNoError, expectNoSidewaysScroll, expectSignedIn, goTo, openOwnerTab, screenshot, sessionCookie, signInWithPassword, signUp } from './helpers/owner-app.ts';

// Forgotten password and "Download my data" in the owner app (issue 23, items 4 and 6), in Chromium
// on a 390 px phone. An owner with a verified email forgets the password, asks for the link from the
// sign-in page, opens the mailed link (the service runs without SMTP_URL, so the mail is in its log,
// where the test reads it as the owner reads their mail), sets a new password on the page behind it,
// and signs in with it; the old password no longer works. Then the owner downloads their data.

const OLD_PASSWORD = 'correct horse battery';
const NEW_PASSWORD = 'a fresh password 2026';
const RESET_LINK = /https?:\/\/[^\s"'<>\\]+\/api\/password\/reset\?token=[A-Za-z0-9_-]+/;

let server: ServerProcess;
let browser: Browser;
let owner: OwnerTab;
const email = `forgetful.${Date.now()}@example.com`;

before(async () => {
  browser = await launchChromium('password reset');
  server = await startServer({ env: { DATABASE_URL: '' }, healthyWithinMs: 90_000 });
  owner = await openOwnerTab(browser);
});

after(async () => {
  await owner?.context.close().catch(() => undefined);
  await browser?.close();
  await server?.stop();
});

test('a verified owner forgets the password, gets the link from the sign-in page, sets a new password and signs in with it; the old one fails', { timeout: 120_000 }, async () => {
  const { page, context } = owner;
  await signUp(page, server.baseUrl, email, 'Forgetful Owner', OLD_PASSWORD);
  await verifyEmail(server, await sessionCookie(context, server.baseUrl), email);
  await goTo(page, 'account');
  await page.click('#signout');
  await page.locator('#signed-out').waitFor({ state: 'visible' });

  // "Forgot your password?" opens a small form with the address typed for signing in.
  await page.fill('#signin-email', email);
  await page.getByRole('button', { name: 'Forgot your password?' }).click();
  const form = page.locator('#forgot-form');
  await form.waitFor({ state: 'visible' });
  assert.equal(await page.inputValue('#forgot-email'), email);
  await expectNoSidewaysScroll(page, 'forgot form');
  const since = server.logs().length;
  await form.getByRole('button', { name: 'Mail me a link' }).click();
  const sent = page.locator('#forgot-sent');
  await sent.waitFor({ state: 'visible' });
  assert.match((await sent.textContent()) ?? '', /If .* is the verified address of an account, a link is on its way/);
  await screenshot(page, 'password-forgot-sent');

  // The mailed link, opened as from a mail app: the page asks for the new password.
  const link = await linkInLog(server, since, RESET_LINK, `a password link for ${email}`);
  const mail = await context.newPage();
  await mail.goto(link);
  await mail.getByRole('heading', { name: 'Choose a new password' }).waitFor();
  assert.ok(((await mail.textContent('main')) ?? '').includes(email));
  await mail.getByLabel(/New password/).fill(NEW_PASSWORD);
  await screenshot(mail, 'password-reset-page');
  await mail.getByRole('button', { name: 'Set the new password' }).click();
  await mail.getByRole('heading', { name: 'Password changed' }).waitFor();
  // The link works once.
  await mail.goto(link);
  await mail.getByRole('heading', { name: 'This link does not work' }).waitFor();
  await mail.close();

  // The old password no longer signs in; the new one does.
  await page.goto(`${server.baseUrl}/app`);
  await page.locator('#signed-out').waitFor({ state: 'visible' });
  await page.fill('#signin-email', email);
  await page.fill('#signin-password', OLD_PASSWORD);
  await page.click('#signin-password-button');
  await page.locator('#message', { hasText: /invalid email or password/i }).waitFor();
  await signInWithPassword(page, server.baseUrl, email, NEW_PASSWORD);
  await expectSignedIn(page, email);
  await expectNoError(page);
  assert.deepEqual(owner.problems, []);
});

test('"Download my data" in Account saves the export; a second try within the minute says to wait', { timeout: 60_000 }, async () => {
  const { page } = owner;
  const account = await goTo(page, 'account');
  const button = account.getByRole('button', { name: 'Download my data' });
  await button.scrollIntoViewIfNeeded();
  await expectNoSidewaysScroll(page, 'export card');
  const [download] = await Promise.all([page.waitForEvent('download'), button.click()]);
  assert.match(download.suggestedFilename(), /^mandate-export-\d{4}-\d{2}-\d{2}\.json$/);
  const doc = JSON.parse(readFileSync((await download.path()) ?? '', 'utf8')) as { profile: { email: string }; activity: { action: string }[] };
  assert.equal(doc.profile.email, email);
  assert.ok(doc.activity.some((r) => r.action === 'password.reset'));
  await page.locator('#export-done', { hasText: download.suggestedFilename() }).waitFor();
  await screenshot(page, 'account-export');

  await button.click();
  const error = page.locator('#export-error');
  await error.waitFor({ state: 'visible' });
  assert.match((await error.textContent()) ?? '', /a moment ago\. Too many attempts\. Wait \d+ s and try again\./);
  assert.deepEqual(owner.problems, []);
});
