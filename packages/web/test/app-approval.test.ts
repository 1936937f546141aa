import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { approvalChallenge, createAgentJwt, detailsDigestOf } from '@mandate/protocol';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../../server/test/helpers/browser.ts';
import { startServer, type ServerProcess } from '../../server/test/helpers/server-process.ts';
import { type AgentKey, type AgentRun, agentKey, runAgent } from './helpers/agent-runner.ts';
import { call, expectStatus } from '../../server/test/helpers/over-http.ts';
import { until } from '../../server/test/helpers/until.ts';
import { verifyEmail } from '../../server/test/helpers/email-over-http.ts';
import { storedReceipt } from '../../server/test/helpers/stored-receipt.ts';
import {
  DESKTOP, PHONE, type OwnerTab, createAgent, expectNoError, expectNoSidewaysScroll, goTo, openOwnerTab, requestCard, sessionCookie, signInWithPassword, signUp,
} from './helpers/owner-app.ts';

// The approval loop with real processes: the service on its own, Chromium as the owner's phone (a
// virtual WebAuthn authenticator holds the passkey) and as the same owner's desktop, and agent
// processes that ask for access, wait, get their pass and have it checked as a site would.
// The tests run in order and build on each other.

const SITE = 'shop.example';
const OTHER_SITE = 'books.example';

let server: ServerProcess;
/** The server's DATA_DIR: the receipts of approvals are read from its database. */
const dataDir = mkdtempSync(join(tmpdir(), 'mandate-app-approval-'));
let browser: Browser;
let phone: OwnerTab;
let desktop: OwnerTab;
let key: AgentKey;
let agentId = '';
let agent: AgentRun | undefined;
const email = `owner.${Date.now()}@example.com`;
const started: AgentRun[] = [];

before(async () => {
  browser = await launchChromium('owner app');
  server = await startServer({ env: { DATABASE_URL: '', DATA_DIR: dataDir } });
  key = await agentKey();
});

after(async () => {
  for (const run of started) run.stop();
  await browser?.close();
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
  key?.remove();
});

function startAgent(site: string, scopes: string[], userInfo: string[] = []): AgentRun {
  const run = runAgent({ serviceUrl: server.url, agentId, keyFile: key.keyFile, site, scopes, userInfo });
  started.push(run);
  return run;
}

/** Marks the page, so a later check can tell it was not reloaded meanwhile. */
const markPage = (tab: OwnerTab) => tab.page.evaluate(() => Object.assign(window, { notReloaded: true }));
const stillSamePage = (tab: OwnerTab) => tab.page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded === true);

test('a person signs up on a phone, adds a passkey from the Requests view and adds an agent by pasting its public key', { timeout: 90_000 }, async () => {
  phone = await openOwnerTab(browser, PHONE);
  const { page } = phone;
  await signUp(page, server.baseUrl, email);
  // The agent asks for the email later: it is offered only once verified (decisions §25).
  await verifyEmail(server, await sessionCookie(phone.context, server.baseUrl), email);
  await page.locator('#view-requests').waitFor({ state: 'visible' });
  assert.equal(await page.locator('#pending-empty').isVisible(), true, 'nothing is waiting yet, and it says so');

  // No passkey yet: the Requests view offers to add one, and one tap does it.
  await page.locator('#passkey-setup').waitFor({ state: 'visible' });
  await page.click('#passkey-setup-button');
  await page.locator('#passkey-setup').waitFor({ state: 'hidden' });
  await expectNoError(page);
  const { credentials } = await phone.cdp.send('WebAuthn.getCredentials', { authenticatorId: phone.authenticatorId });
  assert.equal(credentials.length, 1, 'one passkey on the phone');
  assert.equal(credentials[0]?.rpId, 'localhost');

  agentId = await createAgent(page, 'shopper', key.publicJwk);
  const card = page.locator(`#agents article[data-agent="${agentId}"]`);
  assert.equal(await card.locator('.flag').textContent(), 'Active');
  await card.locator('.agent-status', { hasText: 'In good standing.' }).waitFor();
  await card.locator('.agent-reputation', { hasText: '/ 100' }).waitFor();
  assert.match((await page.locator('#agent-created').textContent()) ?? '', new RegExp(`npx --yes --package=${server.baseUrl}/download/agent mandate-agent set-id ${agentId}`));
  const cookie = (await phone.context.cookies(server.baseUrl)).find((c) => c.name === 'session');
  assert.ok(cookie?.httpOnly, 'the session cookie is HttpOnly');
  const agents = await call<{ id: string; name: string }[]>(server, 'GET', '/api/agents', undefined, { cookie: `session=${cookie.value}` });
  assert.deepEqual(agents.body.map((a) => [a.id, a.name]), [[agentId, 'shopper']]);
});

test('the same owner signs in with the password on a desktop', { timeout: 60_000 }, async () => {
  desktop = await openOwnerTab(browser, DESKTOP);
  await signInWithPassword(desktop.page, server.baseUrl, email);
  await expectNoError(desktop.page);
});

test('an agent process asks for access; the card shows on both screens without a reload; the owner narrows it, sets limits and approves with the passkey; the agent gets its pass; the card leaves the desktop', { timeout: 120_000 }, async () => {
  const { page } = phone;
  await markPage(phone);
  await markPage(desktop);
  agent = startAgent(SITE, ['list', 'orders:read'], ['user:email']);
  const txn = String((await agent.next('requested')).txn_id);

  // The tab bar counts it even while another view is shown.
  await page.locator('#pending-count', { hasText: '1' }).waitFor({ timeout: 15_000 });
  await goTo(page, 'requests');
  const card = await requestCard(page, txn);
  const desktopCard = await requestCard(desktop.page, txn);
  assert.equal(await stillSamePage(phone), true, 'the phone did not reload');
  assert.equal(await stillSamePage(desktop), true, 'the desktop did not reload');

  const text = (await card.textContent()) ?? '';
  for (const part of ['shopper asks for access to shop.example', 'list', 'orders:read', 'user:email', 'your email address', agentId]) {
    assert.ok(text.includes(part), `the card shows "${part}": ${text}`);
  }
  assert.match((await card.locator('.time').textContent()) ?? '', /^\d+ min \d\d s left$|^\d+ s left$/);
  assert.equal(await card.locator('.no-passkey').isVisible(), false, 'the owner has a passkey');

  // Narrow: no orders:read. Limits: one day, five passes.
  await card.getByRole('checkbox', { name: 'orders:read' }).uncheck();
  assert.equal(await card.getByRole('checkbox', { name: 'list', exact: true }).isChecked(), true);
  assert.equal(await card.getByRole('checkbox', { name: /user:email/ }).isChecked(), true);
  await card.locator('details.limits summary').click();
  await card.locator('select.limit-expires').selectOption({ label: '1 day' });
  await card.locator('input.limit-uses').fill('5');
  assert.equal(await card.locator('details.limits summary').textContent(), 'Limits: ends after 1 day, 5 passes');
  await card.getByRole('button', { name: 'Approve' }).click();
  await card.locator('.outcome.ok').waitFor();
  assert.equal(await card.locator('.outcome').textContent(), 'Approved. shopper may list at shop.example and see user:email.');

  // The desktop learns that it was answered elsewhere: a short note, then the card goes.
  await desktopCard.locator('.outcome.gone').waitFor({ timeout: 15_000 });
  await desktopCard.waitFor({ state: 'detached', timeout: 15_000 });
  assert.equal(await desktop.page.locator('#pending-empty').isVisible(), true);

  // The agent process learns the answer, gets its pass, and a site accepts it.
  await agent.next('approved');
  assert.deepEqual((await agent.next('pass')).scope, ['list'], 'the owner narrowed the scopes');
  const verified = await agent.next('verified');
  assert.equal(verified.valid, true, JSON.stringify(verified));
  assert.deepEqual(verified.user_info, { 'user:email': email });
  await card.waitFor({ state: 'detached', timeout: 15_000 });
  await expectNoError(page);
});

test('the Access view shows the grant as approved (scopes, shared fields, limits) and the owner stops sharing the email', { timeout: 60_000 }, async () => {
  const { page } = phone;
  await goTo(page, 'access');
  const grant = page.locator('#grants article', { hasText: SITE });
  await grant.waitFor();
  const text = (await grant.textContent()) ?? '';
  assert.ok(text.includes('shopper') && text.includes('list') && text.includes('user:email'), text);
  assert.ok(!text.includes('orders:read'), 'the narrowed scope is not granted');
  assert.match(text, /4 passes left/, 'one of the five passes was used');
  assert.match(text, /ends /, 'the grant ends after a day');

  await grant.getByRole('button', { name: `Stop sharing user:email with shopper at ${SITE}` }).click();
  await page.locator('#grants .confirm-question', { hasText: 'Stop sharing your email address with shopper at shop.example?' }).waitFor();
  await page.locator('#grants .confirm-yes').click();
  await page.locator('#grants article', { hasText: SITE }).locator('.no-info').waitFor();
  await expectNoError(page);

  // The next pass carries no email.
  assert.ok(agent);
  agent.send('refresh');
  assert.equal((await agent.next('refreshed')).status, 200);
  agent.send('verify');
  const verified = await agent.next('verified');
  assert.equal(verified.valid, true);
  assert.deepEqual(verified.user_info, {});
});

test('a step-up card shows the action exactly as the agent wrote it; the owner approves it with the passkey', { timeout: 60_000 }, async () => {
  const { page } = phone;
  const action = 'pay 12.00 EUR to "Shop & Co" <order 42>';
  const step = await call<{ txn_id: string }>(server, 'POST', '/api/v1/stepup', {
    agent_id: agentId, site: SITE, action, agent_jwt: await createAgentJwt(key.privateKey, agentId),
  });
  expectStatus(step, 200, 'step-up request');
  await goTo(page, 'requests');
  const card = await requestCard(page, step.body.txn_id);
  assert.equal(await card.locator('blockquote.action').textContent(), action);
  assert.equal(await card.locator('blockquote.action b, blockquote.action *').count(), 0, 'the text is text, not markup');
  assert.match((await card.textContent()) ?? '', /shopper asks you to confirm an action at shop\.example/);
  await card.getByRole('button', { name: 'Approve' }).click();
  await card.locator('.outcome.ok').waitFor();
  const token = await until('the step-up token', async () => {
    const r = await call<{ status: string; stepup_token?: string }>(server, 'GET', `/api/v1/authz-requests/${step.body.txn_id}`, undefined, { 'x-agent-jwt': await createAgentJwt(key.privateKey, agentId) });
    return r.body.status === 'pending' ? undefined : r.body;
  }, { ms: 20_000, everyMs: 200 });
  assert.equal(token.status, 'approved');
  assert.ok(token.stepup_token, 'the agent collects its one-time step-up token');
});

test('a step-up bound to details shows the summary as written (lines kept, markup as text, long words wrapped); approved with the passkey, the service keeps the receipt', { timeout: 60_000 }, async () => {
  const { page } = phone;
  const action = 'pay order 42';
  const summary = `Pay 12.00 EUR to "Shop & Co"\n<b>order 42</b> <img src=x onerror="document.title='owned'">\nref ${'X'.repeat(120)}`;
  const digest = detailsDigestOf({ order: '42', amount: '12.00', currency: 'EUR' });
  const step = await call<{ txn_id: string }>(server, 'POST', '/api/v1/stepup', {
    agent_id: agentId, site: SITE, action, details: { summary, digest }, agent_jwt: await createAgentJwt(key.privateKey, agentId),
  });
  expectStatus(step, 200, 'step-up request with details');
  const txn = step.body.txn_id;
  await goTo(page, 'requests');
  const card = await requestCard(page, txn);
  const shown = card.locator('blockquote.details-summary');
  assert.equal(await shown.textContent(), summary, 'the summary exactly as written');
  assert.equal(await shown.innerText(), summary, 'its line breaks are kept on screen');
  assert.equal(await card.locator('blockquote.details-summary *').count(), 0, 'the summary is text, not markup');
  assert.notEqual(await page.title(), 'owned');
  await card.locator('p.hint', { hasText: 'This approval is bound to exactly these details.' }).waitFor();
  assert.equal(await card.locator('blockquote.action').textContent(), action);
  await expectNoSidewaysScroll(page, 'a step-up card with a long summary');

  await card.getByRole('button', { name: 'Approve' }).click();
  await card.locator('.outcome.ok').waitFor();
  const answer = await until('the step-up token', async () => {
    const r = await call<{ status: string; stepup_token?: string }>(server, 'GET', `/api/v1/authz-requests/${txn}`, undefined, { 'x-agent-jwt': await createAgentJwt(key.privateKey, agentId) });
    return r.body.status === 'pending' ? undefined : r.body;
  }, { ms: 20_000, everyMs: 200 });
  assert.equal(answer.status, 'approved');
  const claims = JSON.parse(Buffer.from(answer.stepup_token?.split('.')[1] ?? '', 'base64url').toString('utf8')) as { details_digest?: string };
  assert.equal(claims.details_digest, digest, 'the token carries the digest');

  // What the passkey in the browser signed: the challenge that commits to these details (decisions §29).
  const receipt = storedReceipt(dataDir, txn);
  assert.ok(receipt, 'the service kept the receipt of the approval');
  assert.deepEqual([receipt.site, receipt.action, receipt.details_digest], [SITE, action, digest]);
  const clientData = JSON.parse(Buffer.from(receipt.client_data_json, 'base64url').toString('utf8')) as { type: string; challenge: string; origin: string };
  assert.deepEqual(clientData, { ...clientData, type: 'webauthn.get', origin: server.baseUrl });
  assert.equal(clientData.challenge, approvalChallenge({ txn, aud: SITE, action, detailsDigest: digest, user: receipt.user_id, nonce: receipt.nonce }));
});

test('a site step-up card says the site asks, for the agent; approved with the passkey, the site\'s long poll gets the token', { timeout: 60_000 }, async () => {
  const { page } = phone;
  const pass = await call<{ access_token: string }>(server, 'POST', '/api/v1/token', { agent_id: agentId, site: SITE, agent_jwt: await createAgentJwt(key.privateKey, agentId) });
  expectStatus(pass, 200, 'a pass');
  const bearer = { authorization: `Bearer ${pass.body.access_token}` };
  const filed = await call<{ txn_id: string }>(server, 'POST', '/api/v1/stepup/site', { access_token: pass.body.access_token, action: 'transfer 250.00 EUR' });
  expectStatus(filed, 200, 'site step-up');
  const txn = filed.body.txn_id;
  const waiting = call<{ status: string; stepup_token?: string }>(server, 'GET', `/api/v1/stepup/site/${txn}?wait=25`, undefined, bearer);
  await goTo(page, 'requests');
  const card = await requestCard(page, txn);
  assert.match((await card.textContent()) ?? '', /shop\.example asks you to confirm an action for shopper/);
  assert.equal(await card.locator('blockquote.action').textContent(), 'transfer 250.00 EUR');
  await card.getByRole('button', { name: 'Approve' }).click();
  await card.locator('.outcome.ok').waitFor();
  const answer = await waiting;
  assert.equal(answer.body.status, 'approved', JSON.stringify(answer.body));
  assert.ok(answer.body.stepup_token, 'the site collects the one-time step-up token');
});

test('the owner denies a request with one tap; the agent process is told, and the card leaves the desktop', { timeout: 90_000 }, async () => {
  const { page } = phone;
  const second = startAgent(OTHER_SITE, ['list']);
  const txn = String((await second.next('requested')).txn_id);
  await goTo(page, 'requests');
  const card = await requestCard(page, txn);
  const desktopCard = await requestCard(desktop.page, txn);
  await card.getByRole('button', { name: 'Deny' }).click();
  await card.locator('.outcome.denied').waitFor();
  assert.equal(await card.locator('.outcome').textContent(), 'Denied. shopper gets nothing from books.example.');
  await second.next('denied');
  assert.equal(await second.exited, 1, 'the agent process ends with "refused"');
  await desktopCard.locator('.outcome.gone').waitFor({ timeout: 15_000 });
  await desktopCard.waitFor({ state: 'detached', timeout: 15_000 });
});

test('Activity lists what happened newest first, filters by action, site and agent, and pages with "Older"', { timeout: 90_000 }, async () => {
  const { page } = phone;
  await goTo(page, 'activity');
  const items = page.locator('#activity li');
  await page.locator('#activity li[data-action="request.approved"]').waitFor();
  assert.match((await page.locator('#activity li[data-action="request.approved"]').textContent()) ?? '', /You approved shopper at shop\.example.*list; about you: user:email; ends after 1 day, 5 passes/);
  const seqs = await items.evaluateAll((lis) => lis.map((li) => Number(li.getAttribute('data-seq'))));
  assert.deepEqual(seqs, [...seqs].sort((a, b) => b - a), 'newest first');

  await page.selectOption('#activity-action', 'request.denied');
  await page.waitForFunction(() => [...document.querySelectorAll('#activity li')].every((li) => li.getAttribute('data-action') === 'request.denied'));
  assert.equal(await items.count(), 1);
  assert.match((await items.first().textContent()) ?? '', /You denied shopper at books\.example/);

  await page.selectOption('#activity-action', '');
  await page.fill('#activity-site', OTHER_SITE);
  await page.click('#activity-apply');
  await page.waitForFunction((site) => {
    const lis = [...document.querySelectorAll('#activity li')];
    return lis.length > 0 && lis.every((li) => (li.textContent ?? '').includes(site));
  }, OTHER_SITE);

  await page.fill('#activity-site', 'nowhere.example');
  await page.click('#activity-apply');
  await page.locator('#activity-empty', { hasText: 'Nothing matches these filters' }).waitFor();
  assert.equal(await items.count(), 0);

  await page.click('#activity-clear');
  await page.locator('#activity li[data-action="agent.created"]').waitFor();
  assert.equal(await page.locator('#activity-agent option', { hasText: 'shopper' }).getAttribute('value'), agentId);
  await page.selectOption('#activity-agent', agentId);
  await page.locator('#activity li[data-action="request.created"]').first().waitFor();
  await page.selectOption('#activity-agent', '');

  // Status reports push the history past one page: the newest arrive while the view is open.
  for (let i = 0; i < 24; i++) {
    expectStatus(await call(server, 'POST', '/api/v1/agent-status', { agent_id: agentId, agent_jwt: await createAgentJwt(key.privateKey, agentId), status: `working ${i}` }), 200, 'agent status');
  }
  await page.locator('#activity li', { hasText: 'working 23' }).waitFor({ timeout: 15_000 });
  // Freshly opened, the view shows one page; older records come with "Older".
  await page.reload();
  await page.locator('#activity li', { hasText: 'working 23' }).waitFor();
  await page.locator('#activity-more').waitFor({ state: 'visible' });
  assert.equal(await items.count(), 20, 'one page');
  while (await page.locator('#activity-more').isVisible()) {
    const shown = await items.count();
    await page.click('#activity-more');
    await page.waitForFunction((n) => document.querySelectorAll('#activity li').length > n, shown);
  }
  await page.locator('#activity li[data-action="agent.created"]').waitFor();
  const all = await items.evaluateAll((lis) => lis.map((li) => Number(li.getAttribute('data-seq'))));
  assert.equal(new Set(all).size, all.length, 'no record twice');
  assert.deepEqual(all, [...all].sort((a, b) => b - a), 'still newest first');
});

test('revoking the grant in the Access view makes the agent\'s pass fail at once', { timeout: 60_000 }, async () => {
  const { page } = phone;
  assert.ok(agent);
  await goTo(page, 'access');
  const grant = page.locator('#grants article', { hasText: SITE });
  await grant.getByRole('button', { name: `Revoke shopper at ${SITE}` }).click();
  await grant.locator('.confirm-question', { hasText: "Revoke shopper's access to shop.example? The site refuses it at once if it checks with Mandate; if it checks passes itself, within a second while connected to Mandate's revocation stream, within a minute otherwise." }).waitFor();
  await grant.locator('.confirm-yes').click();
  await page.locator('#grants article', { hasText: SITE }).waitFor({ state: 'detached' });
  assert.match((await page.locator('#message').textContent()) ?? '', /revoked/);
  assert.equal(await page.locator('#grants-empty').isVisible(), true);
  agent.send('verify');
  const refused = await agent.next('verified');
  assert.equal(refused.valid, false);
  assert.equal(refused.error, 'grant_revoked');
  agent.send('exit');
  assert.equal(await agent.exited, 0);
});

test('revoking the agent blocks it at every site at once and ends its access; unblocked, it has to ask again', { timeout: 90_000 }, async () => {
  const { page } = phone;
  // Fresh access for the agent, approved on the phone.
  const third = startAgent(SITE, ['list']);
  const txn = String((await third.next('requested')).txn_id);
  await goTo(page, 'requests');
  const request = await requestCard(page, txn);
  await request.getByRole('button', { name: 'Approve' }).click();
  await request.locator('.outcome.ok').waitFor();
  assert.equal((await third.next('verified')).valid, true);

  await goTo(page, 'agents');
  const card = page.locator(`#agents article[data-agent="${agentId}"]`);
  await card.getByRole('button', { name: 'Revoke shopper' }).click();
  await card.locator('.confirm-question', { hasText: "Revoke shopper? Sites that check with Mandate refuse it at once, sites that check passes themselves within a second while connected to Mandate's revocation stream, within a minute otherwise." }).waitFor();
  await card.locator('.confirm-yes').click();
  const revoked = page.locator(`#agents article[data-agent="${agentId}"]`);
  await revoked.locator('.flag', { hasText: 'Revoked' }).waitFor();
  await revoked.locator('.agent-status', { hasText: 'Blocked everywhere' }).waitFor();
  const status = await call<{ global_flag: string }>(server, 'GET', `/api/v1/agents/${agentId}/status`);
  assert.equal(status.body.global_flag, 'revoked');
  third.send('verify');
  const refused = await third.next('verified');
  assert.equal(refused.valid, false);
  assert.equal(refused.error, 'agent_revoked');
  await goTo(page, 'access');
  await page.locator('#grants-empty').waitFor({ state: 'visible' });

  await goTo(page, 'agents');
  await revoked.getByRole('button', { name: 'Unblock shopper' }).click();
  await page.locator(`#agents article[data-agent="${agentId}"] .flag`, { hasText: 'Active' }).waitFor();
  assert.match((await page.locator('#message').textContent()) ?? '', /has to ask you again/);
  third.send('refresh');
  const again = await third.next('refreshed');
  assert.equal(again.status, 403, `its old access stays ended: ${JSON.stringify(again)}`);
  third.send('exit');
  assert.equal(await third.exited, 0);
  await expectNoError(page);
});

test('deleting the agent takes a confirm step, and then it is gone for good', { timeout: 60_000 }, async () => {
  const { page } = phone;
  await goTo(page, 'agents');
  const card = page.locator(`#agents article[data-agent="${agentId}"]`);
  await card.getByRole('button', { name: 'Delete shopper' }).click();
  await card.locator('.confirm-no').click();
  assert.equal(await card.isVisible(), true, 'cancel keeps it');
  await card.getByRole('button', { name: 'Delete shopper' }).click();
  await card.locator('.confirm-yes').click();
  await card.waitFor({ state: 'detached' });
  await page.locator('#agents-empty').waitFor({ state: 'visible' });
  const status = await call<{ global_flag: string }>(server, 'GET', `/api/v1/agents/${agentId}/status`);
  assert.equal(status.body.global_flag, 'revoked');
});

test('no script errors, CSP violations or server errors on either screen; nothing is wider than a 360 px phone', { timeout: 60_000 }, async () => {
  await phone.page.setViewportSize({ width: 360, height: 740 });
  for (const view of ['requests', 'agents', 'access', 'activity', 'account'] as const) {
    await goTo(phone.page, view);
    await expectNoSidewaysScroll(phone.page, `${view} at 360 px`);
  }
  assert.deepEqual(phone.problems, [], 'phone');
  assert.deepEqual(desktop.problems, [], 'desktop');
  await phone.context.close();
  await desktop.context.close();
});
