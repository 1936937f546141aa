import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../../server/test/helpers/browser.ts';
import { startServer, type ServerProcess } from '../../server/test/helpers/server-process.ts';
import { call } from '../../server/test/helpers/over-http.ts';
import { agentKey } from './helpers/agent-runner.ts';
import { addPasskey, createAgent, expectNoSidewaysScroll, expectSignedIn, goTo, openOwnerTab, sessionCookie, signUp } from './helpers/owner-app.ts';

// Deleting the account from the owner app (issue 23 item 7), in Chromium at phone width with a
// virtual passkey authenticator; the service runs as its own process. The danger zone at the end of
// Account: typed email, password, then the sign-in page with a message; the address signs up again.

let server: ServerProcess;
let browser: Browser;

before(async () => {
  browser = await launchChromium('delete-account');
  server = await startServer({ env: { DATABASE_URL: '' } });
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

test('a person signs up, adds a passkey and an agent, deletes the account with the typed confirmation, lands on sign-in, and signs up again with the same email', { timeout: 180_000 }, async () => {
  const tab = await openOwnerTab(browser);
  const { page, context } = tab;
  const email = `delete.${Date.now()}@example.com`;
  await signUp(page, server.baseUrl, email);
  await addPasskey(page, 'Test phone');
  const key = await agentKey();
  const agentId = await createAgent(page, 'Shopper', key.publicJwk);
  const oldCookie = await sessionCookie(context, server.baseUrl);

  const account = await goTo(page, 'account');
  const card = account.locator('#delete-card');
  await card.scrollIntoViewIfNeeded();
  assert.match((await card.textContent()) ?? '', /cannot be undone/);
  await card.locator('summary').click();
  const button = page.locator('#delete-button');
  assert.equal(await button.isDisabled(), true, 'off until the email is typed');
  await page.fill('#delete-confirm', 'someone.else@example.com');
  assert.equal(await button.isDisabled(), true, 'another address does not enable it');
  await page.fill('#delete-confirm', email.toUpperCase());
  assert.equal(await button.isDisabled(), false, 'the address, in any case, enables it');
  await expectNoSidewaysScroll(page, 'Account with the danger zone open');

  // A wrong password is refused on the form; nothing is deleted.
  await page.fill('#delete-password', 'not my password');
  await button.click();
  await page.locator('#delete-error').waitFor({ state: 'visible' });
  assert.match((await page.locator('#delete-error').textContent()) ?? '', /password is not correct/i);
  assert.equal((await call(server, 'GET', '/api/me', undefined, { cookie: oldCookie })).status, 200);

  await page.fill('#delete-password', 'correct horse battery');
  await button.click();
  await page.locator('#signed-out').waitFor({ state: 'visible' });
  assert.equal(await page.locator('#tabs').isVisible(), false);
  await page.locator('#message', { hasText: 'Your account has been deleted' }).waitFor({ state: 'visible' });
  assert.equal(await page.locator('#message').getAttribute('class'), 'ok');

  // The old session is gone, and so is the agent.
  assert.equal((await call(server, 'GET', '/api/me', undefined, { cookie: oldCookie })).status, 401);
  const status = await call<{ global_flag: string }>(server, 'GET', `/api/v1/agents/${agentId}/status`);
  assert.equal(status.status, 200);
  assert.equal(status.body.global_flag, 'revoked', 'sites see the agent revoked');
  key.remove();

  // The same address signs up again: a new, empty account.
  await page.fill('#signup-email', email);
  await page.fill('#signup-password', 'a new password here');
  await page.fill('#signup-name', 'Phone Owner');
  await page.click('#signup-button');
  await expectSignedIn(page, email);
  const agents = await goTo(page, 'agents');
  assert.equal(await agents.locator('#agents article').count(), 0, 'none of the old agents');
  const me = await call<{ pending: unknown[]; grants: unknown[] }>(server, 'GET', '/api/me', undefined, { cookie: await sessionCookie(context, server.baseUrl) });
  assert.deepEqual([me.body.pending, me.body.grants], [[], []]);
  assert.deepEqual(tab.problems, [], 'no script errors or CSP violations');
  await context.close();
});
