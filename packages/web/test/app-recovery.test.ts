import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { createAgentJwt } from '@mandate/protocol';
import { launchChromium } from '../../server/test/helpers/browser.ts';
import { startServer, type ServerProcess } from '../../server/test/helpers/server-process.ts';
import { call, expectStatus } from '../../server/test/helpers/over-http.ts';
import { until } from '../../server/test/helpers/until.ts';
import { startTwilioStandIn, type TwilioStandIn } from '../../server/test/helpers/stand-ins/twilio.ts';
import { agentKey } from './helpers/agent-runner.ts';
import { addPasskey, createAgent, expectNoError, expectNoSidewaysScroll, expectSignedIn, goTo, openOwnerTab, requestCard, signUp } from './helpers/owner-app.ts';

// Issue 23: an owner with a passkey, a verified phone and recovery codes loses the passkey (a new
// browser with a new virtual authenticator), recovers with the texted code (read from the Twilio
// stand-in the service sends to) and a recovery code, adds a new passkey and approves with it. On a
// phone-sized screen.

let server: ServerProcess;
let browser: Browser;
let twilio: TwilioStandIn;

before(async () => {
  twilio = await startTwilioStandIn();
  browser = await launchChromium('recovery');
  server = await startServer({ env: { DATABASE_URL: '', ...twilio.env } });
});

after(async () => {
  await browser?.close();
  await server?.stop();
  await twilio?.close();
});

const PHONE = '+12015550142';
/** The code of the newest text to PHONE after `count` texts were already there. */
const nextCode = (count: number) => until('a text from the service', () => (twilio.messages.filter((m) => m.to === PHONE).length > count ? twilio.lastCode(PHONE) : undefined), { ms: 20_000, everyMs: 100 });
const textsSoFar = () => twilio.messages.filter((m) => m.to === PHONE).length;

test('lost passkey: phone and recovery codes in Account, then "Lost your passkey?", a new passkey, and an approval with it', { timeout: 180_000 }, async () => {
  const email = `recovery.${Date.now()}@example.com`;
  const old = await openOwnerTab(browser);
  await old.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.baseUrl });
  const page = old.page;
  await signUp(page, server.baseUrl, email);
  await addPasskey(page, 'Old phone');

  // The phone: a code texted, typed in, verified; the number shown masked.
  await goTo(page, 'account');
  await page.fill('#phone-input', '+1 (201) 555-0142');
  let texts = textsSoFar();
  await page.click('#phone-send');
  await page.locator('#phone-verify-form').waitFor({ state: 'visible' });
  assert.match((await page.locator('#phone-sent').textContent()) ?? '', /\+1 ••• ••• 0142/);
  // A wrong code first: a readable error that says how many tries are left.
  await page.fill('#phone-code', '000000');
  await page.click('#phone-verify');
  await page.locator('#phone-error').waitFor({ state: 'visible' });
  assert.match((await page.locator('#phone-error').textContent()) ?? '', /Wrong code: 4 tries left/);
  const phoneCode = await nextCode(texts);
  await page.fill('#phone-code', phoneCode);
  await page.click('#phone-verify');
  await page.locator('#phone-badge').waitFor({ state: 'visible' });
  assert.equal(await page.locator('#phone-number').textContent(), '+1 ••• ••• 0142');
  await expectNoError(page);

  // Recovery codes: the password session is asked for a passkey sign-in first, then they are shown once.
  await page.click('#recovery-make');
  await page.locator('#passkey-reauth').waitFor({ state: 'visible' });
  await page.click('#passkey-reauth-button');
  await page.locator('#passkey-reauth').waitFor({ state: 'hidden' });
  await page.click('#recovery-make');
  await page.locator('#recovery-codes-shown').waitFor({ state: 'visible' });
  const codes = await page.locator('#recovery-codes-list li').allTextContents();
  assert.equal(codes.length, 10);
  for (const c of codes) assert.match(c, /^[A-Z2-7]{4}-[A-Z2-7]{4}-[A-Z2-7]{4}$/);
  await expectNoSidewaysScroll(page, 'the Account view with recovery codes');
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#recovery-download')]);
  assert.equal(download.suggestedFilename(), 'mandate-recovery-codes.txt');
  const file = readFileSync((await download.path()) ?? '', 'utf8');
  for (const c of codes) assert.ok(file.includes(c), 'the file holds every code');
  await page.click('#recovery-copy');
  assert.ok((await page.evaluate(() => navigator.clipboard.readText())).includes(codes[0] ?? '?'), 'copied');
  await expectNoError(page);
  assert.deepEqual(old.problems, []);

  // The agent that will ask for something after the recovery.
  const key = await agentKey();
  const agentId = await createAgent(page, 'shopper', key.publicJwk);
  await old.context.close(); // the passkey is lost with this browser and its authenticator

  // A new browser, a new authenticator: "Lost your passkey?".
  const fresh = await openOwnerTab(browser);
  const p = fresh.page;
  await p.goto(`${server.baseUrl}/app`);
  await p.locator('#signed-out').waitFor({ state: 'visible' });
  await p.click('#recover-open');
  await p.locator('#recover').waitFor({ state: 'visible' });
  await expectNoSidewaysScroll(p, 'the recovery screen');
  await p.fill('#recover-email', email);
  await p.fill('#recover-phone', '+1 201 555 0142');
  texts = textsSoFar();
  await p.click('#recover-send');
  await p.locator('#recover-complete-form').waitFor({ state: 'visible' });
  const smsCode = await nextCode(texts);
  // A wrong recovery code: one readable error, not saying which part was wrong.
  await p.fill('#recover-sms-code', smsCode);
  await p.fill('#recover-code', 'AAAA-BBBB-CCCC');
  await p.fill('#recover-password', 'a brand new password');
  await p.click('#recover-complete');
  await p.locator('#recover-complete-error').waitFor({ state: 'visible' });
  assert.match((await p.locator('#recover-complete-error').textContent()) ?? '', /SMS code or the recovery code is wrong/);
  await p.fill('#recover-code', (codes[2] ?? '').toLowerCase());
  await p.click('#recover-complete');
  await expectSignedIn(p, email);
  await p.locator('section.view[data-view="account"]').waitFor({ state: 'visible' });
  assert.match((await p.locator('#message').textContent()) ?? '', /Account recovered.*Add a new passkey now/);
  await p.locator('#devices li.empty').waitFor();
  assert.equal(await p.locator('#devices li[data-kind="passkey"]').count(), 0, 'the old passkey is gone');
  assert.equal(await p.locator('#passkey-form').isVisible(), true, 'a recovery session may add the first passkey');
  await expectNoSidewaysScroll(p, 'the Account view after recovery');

  // The new passkey, then an approval with it.
  await addPasskey(p, 'New phone');
  const asked = await call<{ txn_id: string }>(server, 'POST', '/api/v1/authz-requests', { agent_id: agentId, site: 'shop.example', scopes: ['orders:read'], agent_jwt: await createAgentJwt(key.privateKey, agentId) });
  expectStatus(asked, 200, 'access request');
  await goTo(p, 'requests');
  const card = await requestCard(p, asked.body.txn_id);
  await card.getByRole('button', { name: 'Approve' }).click();
  await card.locator('.outcome.ok').waitFor();
  const polled = await call<{ status: string }>(server, 'GET', `/api/v1/authz-requests/${asked.body.txn_id}`, undefined, { 'x-agent-jwt': await createAgentJwt(key.privateKey, agentId) });
  assert.equal(polled.body.status, 'approved');
  await expectNoError(p);

  // Removing the phone: asked once, then gone from the card.
  await goTo(p, 'account');
  await p.click('#phone-remove');
  await p.locator('#phone-remove-row .confirm-yes').click();
  await p.locator('#phone-badge').waitFor({ state: 'hidden' });
  assert.equal(await p.locator('#phone-number').textContent(), 'No phone yet');
  await expectNoError(p);
  assert.deepEqual(fresh.problems, []);
  await fresh.context.close();
});
