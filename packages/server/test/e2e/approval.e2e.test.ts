import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import type { Browser, Locator, Page } from 'playwright-core';
import { createAgentJwt, createDpopProof, generateAgentKeyPair } from '@mandate/protocol';
import { addAuthenticator, expectNoError, launchChromium } from '../helpers/browser.ts';
import { startServer, type ServerProcess } from '../helpers/server-process.ts';

// The whole approval loop with real processes: the server on its own, Chromium as the owner's phone
// (a virtual WebAuthn authenticator holds the passkey), and this test process as the agent and the
// site, talking plain HTTP with keys and proofs made by @mandate/protocol.

const SITE = 'shop.example';

let server: ServerProcess | undefined;
let browser: Browser | undefined;
let base = '';
let direct = '';

before(async () => {
  browser = await launchChromium('approval');
  server = await startServer({ env: { DATABASE_URL: '' } });
  base = server.baseUrl;
  direct = server.url;
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

/** Polls `fn` until it gives a value (not undefined), as an agent polls the service. */
async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await fn();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** JSON over real HTTP to the server process; answers status and body. */
async function call<T = Record<string, unknown>>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: T }> {
  const res = await fetch(`${direct}${path}`, {
    method,
    headers: { accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
}

function expectStatus(res: { status: number; body: unknown }, status: number, what: string): void {
  assert.equal(res.status, status, `${what}: ${res.status} ${JSON.stringify(res.body)}`);
}

async function cardFor(page: Page, txnId: string): Promise<Locator> {
  const card = page.locator(`#pending article[data-txn="${txnId}"]`);
  // The page polls GET /api/me every 3 s; the card must show up without a reload.
  await card.waitFor({ state: 'visible', timeout: 15_000 });
  return card;
}

test('an owner approves access and a step-up with a passkey on the page, the agent uses them, and the owner revokes', { timeout: 180_000 }, async () => {
  assert.ok(browser, 'browser launched');
  // A phone-sized screen.
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
  const page = await context.newPage();
  const problems: string[] = [];
  const dialogs: string[] = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    // A 401 from the first load while signed out is expected; Chrome logs it as a failed resource.
    if (m.type() === 'error' && !/Failed to load resource: .* 401/.test(m.text())) problems.push(`console: ${m.text()} ${m.location().url}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 500) problems.push(`server error: ${r.status()} ${r.request().method()} ${r.url()}`);
  });
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.accept();
  });
  await page.exposeFunction('reportCspViolation', (text: string) => problems.push(`CSP violation: ${text}`));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      (window as unknown as { reportCspViolation(t: string): void }).reportCspViolation(`${e.violatedDirective} ${e.blockedURI}`);
    });
  });
  const cdp = await context.newCDPSession(page);
  await addAuthenticator(cdp);

  // The person signs up and adds a passkey.
  const email = `approve.${Date.now()}@example.com`;
  await page.goto(`${base}/app`);
  await page.locator('#signed-out').waitFor({ state: 'visible' });
  await page.fill('#signup-email', email);
  await page.fill('#signup-password', 'correct horse battery');
  await page.fill('#signup-name', 'Phone Owner');
  await page.click('#signup-button');
  await page.locator('#signed-in').waitFor({ state: 'visible' });
  await page.fill('#passkey-name', 'My phone');
  await page.click('#passkey-add-button');
  await page.locator('#devices li', { hasText: 'My phone' }).waitFor();
  await expectNoError(page);
  assert.equal(await page.locator('#pending-empty').isVisible(), true, 'nothing waiting yet');

  // The agent's key pair lives here; the person pastes its public JWK on the page.
  const { privateKey, publicJwk } = await generateAgentKeyPair();
  await page.fill('#agent-name', 'shopper');
  await page.fill('#agent-key', JSON.stringify(publicJwk));
  await page.click('#agent-create-button');
  await page.locator('#agents li', { hasText: 'shopper' }).waitFor();
  await expectNoError(page);
  const cookie = (await context.cookies(base)).find((c) => c.name === 'session');
  assert.ok(cookie, 'session cookie set');
  const owner = { cookie: `session=${cookie.value}` };
  const agents = await call<{ id: string; name: string }[]>('GET', '/api/agents', undefined, owner);
  expectStatus(agents, 200, 'list agents');
  const agentId = agents.body.find((a) => a.name === 'shopper')?.id;
  assert.ok(agentId, 'the agent exists');
  const jwt = () => createAgentJwt(privateKey, agentId);
  const proof = (accessToken: string, htm: string, htu: string) => createDpopProof(privateKey, publicJwk, { htm, htu, accessToken });

  // The agent asks for access.
  const asked = await call<{ txn_id: string; expires_in: number }>('POST', '/api/v1/authz-requests', {
    agent_id: agentId, site: SITE, scopes: ['list', 'orders:read'], user_info: ['user:email'], agent_jwt: await jwt(),
  });
  expectStatus(asked, 200, 'access request');
  const txn = asked.body.txn_id;

  // The card appears on the phone; the person unticks orders:read and approves with the passkey.
  const card = await cardFor(page, txn);
  const cardText = (await card.textContent()) ?? '';
  for (const part of ['shopper', SITE, 'list', 'orders:read', 'user:email']) assert.ok(cardText.includes(part), `card shows ${part}: ${cardText}`);
  assert.match((await card.locator('.time').textContent()) ?? '', /\d+ min \d+ s left|\d+ s left/);
  await expectNoError(page);
  assert.equal(await page.locator('#pending-count').textContent(), '1');
  await card.getByRole('checkbox', { name: 'orders:read' }).uncheck();
  assert.equal(await card.getByRole('checkbox', { name: 'list', exact: true }).isChecked(), true);
  assert.equal(await card.getByRole('checkbox', { name: /user:email/ }).isChecked(), true);
  await card.getByRole('button', { name: 'Approve' }).click();
  await card.locator('.outcome.ok').waitFor();
  assert.match((await card.locator('.outcome').textContent()) ?? '', /^Approved\. shopper may list at shop\.example and see user:email\.$/);

  // The agent polls, gets its pass, and a site verifies it.
  const approved = await until('the access request to be approved', async () => {
    const r = await call<{ status: string; scopes: string[] }>('GET', `/api/v1/authz-requests/${txn}`);
    expectStatus(r, 200, 'poll');
    return r.body.status === 'pending' ? undefined : r.body;
  });
  assert.equal(approved.status, 'approved');
  const token = await call<{ access_token: string; token_type: string; scope: string[]; refresh_token: string }>('POST', '/api/v1/token', { agent_id: agentId, site: SITE, agent_jwt: await jwt() });
  expectStatus(token, 200, 'token');
  assert.equal(token.body.token_type, 'DPoP');
  assert.deepEqual(token.body.scope, ['list'], 'the owner narrowed the scopes');
  const pass = decodeJwt(token.body.access_token) as { scope: string[]; user_info: Record<string, string>; aud: string };
  assert.deepEqual(pass.scope, ['list']);
  assert.deepEqual(pass.user_info, { 'user:email': email });
  assert.equal(pass.aud, SITE);
  const accessToken = token.body.access_token;
  const ordersUrl = `https://${SITE}/orders`;
  const verified = await call<Record<string, unknown>>('POST', '/api/v1/verify', {
    access_token: accessToken, dpop: await proof(accessToken, 'GET', ordersUrl), method: 'GET', url: ordersUrl, site: SITE,
  });
  expectStatus(verified, 200, 'verify');
  assert.equal(verified.body.valid, true, JSON.stringify(verified.body));
  assert.equal(verified.body.agent_id, agentId);
  assert.deepEqual(verified.body.scopes, ['list']);
  assert.deepEqual(verified.body.user_info, { 'user:email': email });
  assert.equal(verified.body.stepup, false);

  // The grant is listed on the page, as approved.
  const grant = page.locator('#grants article', { hasText: SITE });
  await grant.waitFor();
  const grantText = (await grant.textContent()) ?? '';
  assert.ok(grantText.includes('shopper') && grantText.includes('list') && grantText.includes('user:email'), grantText);
  assert.ok(!grantText.includes('orders:read'), 'the narrowed scope is not granted');

  // A step-up: the agent asks, the person approves on the page, the agent collects the token.
  const action = 'pay 12.00 EUR';
  const step = await call<{ txn_id: string }>('POST', '/api/v1/stepup', { agent_id: agentId, site: SITE, action, agent_jwt: await jwt() });
  expectStatus(step, 200, 'step-up request');
  const stepCard = await cardFor(page, step.body.txn_id);
  assert.equal(await stepCard.locator('blockquote.action').textContent(), action);
  assert.match((await stepCard.textContent()) ?? '', /shopper asks you to confirm an action at shop\.example/);
  await stepCard.getByRole('button', { name: 'Approve' }).click();
  await stepCard.locator('.outcome.ok').waitFor();
  const stepupToken = await until('the step-up token', async () => {
    const r = await call<{ status: string; stepup_token?: string; stepup_token_error?: string }>('GET', `/api/v1/authz-requests/${step.body.txn_id}`, undefined, { 'x-agent-jwt': await jwt() });
    expectStatus(r, 200, 'step-up poll');
    if (r.body.status === 'pending') return undefined;
    assert.equal(r.body.status, 'approved', JSON.stringify(r.body));
    assert.ok(r.body.stepup_token, JSON.stringify(r.body));
    return r.body.stepup_token;
  });
  const payUrl = `https://${SITE}/pay`;
  const paid = await call<Record<string, unknown>>('POST', '/api/v1/verify', {
    access_token: accessToken, dpop: await proof(accessToken, 'POST', payUrl), method: 'POST', url: payUrl, site: SITE, stepup_token: stepupToken, action,
  });
  assert.equal(paid.body.valid, true, JSON.stringify(paid.body));
  assert.equal(paid.body.stepup, true);

  // The activity list shows the approvals, newest first.
  const approvedItem = page.locator('#activity li[data-action="request.approved"]');
  await approvedItem.waitFor({ timeout: 10_000 });
  assert.match((await approvedItem.textContent()) ?? '', /You approved shopper at shop\.example.*list; about you: user:email/);
  await page.locator('#activity li[data-action="stepup.approved"]', { hasText: action }).waitFor({ timeout: 10_000 });
  const seqs = await page.locator('#activity li').evaluateAll((items) => items.map((li) => Number(li.getAttribute('data-seq'))));
  assert.deepEqual(seqs, [...seqs].sort((a, b) => b - a), 'newest first');

  // The person stops giving the email: the next pass carries no user info.
  await grant.getByRole('button', { name: `Remove user:email from shopper at ${SITE}` }).click();
  await grant.locator('text=No information about you.').waitFor();
  assert.match(dialogs.at(-1) ?? '', /Stop giving user:email/);
  const refreshed = await call<{ access_token: string }>('POST', '/api/v1/token', { agent_id: agentId, site: SITE, agent_jwt: await jwt(), refresh_token: token.body.refresh_token });
  expectStatus(refreshed, 200, 'refresh');
  assert.deepEqual((decodeJwt(refreshed.body.access_token) as { user_info: unknown }).user_info, {});

  // The person revokes the grant on the page (after confirming); the pass stops working at once.
  await page.locator('#grants article', { hasText: SITE }).getByRole('button', { name: /^Revoke/ }).click();
  await page.locator('#grants article', { hasText: SITE }).waitFor({ state: 'detached' });
  assert.match(dialogs.at(-1) ?? '', /Revoke shopper's access to shop\.example\?/);
  assert.match((await page.locator('#message').textContent()) ?? '', /revoked/);
  assert.equal(await page.locator('#grants-empty').isVisible(), true);
  const revoked = await call<Record<string, unknown>>('POST', '/api/v1/verify', {
    access_token: accessToken, dpop: await proof(accessToken, 'GET', ordersUrl), method: 'GET', url: ordersUrl, site: SITE,
  });
  assert.equal(revoked.body.valid, false);
  assert.equal(revoked.body.error, 'grant_revoked');
  await page.locator('#activity li[data-action="grant.revoked"]').waitFor({ timeout: 10_000 });

  // The agent asks again and the person denies.
  const again = await call<{ txn_id: string }>('POST', '/api/v1/authz-requests', { agent_id: agentId, site: SITE, scopes: ['list'], agent_jwt: await jwt() });
  expectStatus(again, 200, 'second access request');
  const againCard = await cardFor(page, again.body.txn_id);
  await againCard.getByRole('button', { name: 'Deny' }).click();
  await againCard.locator('.outcome.denied').waitFor();
  const denied = await call<{ status: string }>('GET', `/api/v1/authz-requests/${again.body.txn_id}`);
  assert.equal(denied.body.status, 'denied');

  // Activity pages with "More": status reports push the history past one page.
  for (let i = 0; i < 20; i++) {
    expectStatus(await call('POST', '/api/v1/agent-status', { agent_id: agentId, agent_jwt: await jwt(), status: `working ${i}` }), 200, 'agent status');
  }
  await page.locator('#activity li', { hasText: 'working 19' }).waitFor({ timeout: 10_000 });
  // Freshly opened, the page shows one page of records; older ones come with "More".
  await page.reload();
  await page.locator('#activity li', { hasText: 'working 19' }).waitFor({ timeout: 10_000 });
  await page.locator('#activity-more').waitFor({ state: 'visible', timeout: 10_000 });
  assert.equal(await page.locator('#activity li').count(), 20);
  const shown = await page.locator('#activity li').count();
  await page.click('#activity-more');
  await page.locator('#activity li[data-action="agent.created"]').waitFor({ timeout: 10_000 });
  assert.ok((await page.locator('#activity li').count()) > shown);
  assert.equal(await page.locator('#activity-more').isVisible(), false, 'the last page hides "More"');

  // Nothing on the page is wider than the phone.
  assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth), true, 'no sideways scrolling');

  // The person removes the agent (after confirming).
  await page.locator('#agents li', { hasText: 'shopper' }).getByRole('button', { name: 'Remove shopper' }).click();
  await page.locator('#agents li', { hasText: 'shopper' }).waitFor({ state: 'detached' });
  assert.match(dialogs.at(-1) ?? '', /Remove the agent "shopper"\?/);
  const status = await call<{ global_flag: string }>('GET', `/api/v1/agents/${agentId}/status`);
  assert.equal(status.body.global_flag, 'revoked');

  await expectNoError(page);
  assert.deepEqual(problems, [], 'no script errors, failed requests or CSP violations on the page');
  await context.close();
});
