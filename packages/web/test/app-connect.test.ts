import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../../server/test/helpers/browser.ts';
import { startServer, type ServerProcess } from '../../server/test/helpers/server-process.ts';
import { HttpOwner, call, expectStatus } from '../../server/test/helpers/over-http.ts';
import { verifyEmail } from '../../server/test/helpers/email-over-http.ts';
import { type OperatorSite, startOperatorSite } from '../../server/test/helpers/stand-ins/operator-site.ts';
import { type OwnerTab, PHONE, expectNoSidewaysScroll, openOwnerTab, signUp } from './helpers/owner-app.ts';

// The consent page (/connect, decisions §17) on a phone, with real processes: the service, an
// operator's site on 127.0.0.1 (its domain verified for real, switched on by an admin), and Chromium
// as the person, whose passkey lives in a virtual authenticator. The person approves with the
// passkey and lands on the operator's redirect URI with code, state and iss; the operator then
// exchanges the code for the connection.

const ADMIN = `admin.${Date.now()}@example.com`;
let server: ServerProcess;
let browser: Browser;
let site: OperatorSite;
let tab: OwnerTab | undefined;
/** Made by the first test; the second registers its own operator with it. */
let admin: HttpOwner | undefined;

before(async () => {
  browser = await launchChromium('consent page');
  site = await startOperatorSite();
  server = await startServer({ env: { DATABASE_URL: '', OUTBOUND_ALLOW_LOOPBACK: 'true', ADMIN_EMAILS: ADMIN } });
});

after(async () => {
  await tab?.context.close().catch(() => undefined);
  await browser?.close();
  await server?.stop();
  await site?.close();
});

test('a person approves an operator with a passkey on a phone and lands on its redirect URI with code, state and iss', { timeout: 90_000 }, async () => {
  // The operator: registered, its domain verified through its verification file, switched on by an admin.
  admin = await HttpOwner.signUp(server, server.baseUrl, { email: ADMIN });
  await verifyEmail(server, admin.auth, ADMIN);
  const redirectUri = `${site.origin}/cb`;
  const op = await admin.ok<{ id: string; secret: string; verification: { line: string } }>('POST', '/api/operators', { name: 'Acme agents', redirect_uris: [redirectUri], browser: 'operator' });
  site.serve({ status: 200, body: `${op.verification.line}\n` });
  await admin.ok('POST', `/api/operators/${op.id}/verify`);
  await admin.ok('POST', `/api/admin/operators/${op.id}/status`, { enabled: true });

  // The person: signed up on a phone, the first passkey set up as the app offers it.
  tab = await openOwnerTab(browser, PHONE);
  const { page } = tab;
  await signUp(page, server.baseUrl, `connect.${Date.now()}@example.com`);
  await page.locator('#passkey-setup').waitFor({ state: 'visible' });
  await page.click('#passkey-setup-button');
  await page.locator('#passkey-setup').waitFor({ state: 'hidden' });

  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const state = `st-${randomBytes(6).toString('hex')}`;
  const link = new URL('/connect', server.baseUrl);
  for (const [k, v] of Object.entries({ operator: op.id, redirect_uri: redirectUri, state, code_challenge: challenge, code_challenge_method: 'S256' })) link.searchParams.set(k, v);
  await page.goto(link.toString());
  assert.equal(await page.locator('h1').textContent(), 'Connect Acme agents?');
  assert.equal(await page.locator('.cn-domain').textContent(), new URL(site.origin).host);
  assert.equal(await page.locator('#cn-limit').textContent(), '5');
  assert.match((await page.locator('#cn-browser').textContent()) ?? '', /operator's computers/);
  await page.waitForFunction(() => !(document.getElementById('cn-approve') as HTMLButtonElement).disabled);
  assert.equal(await page.locator('#cn-deny').isEnabled(), true);
  await expectNoSidewaysScroll(page, 'the consent page');

  // The stand-in site answers only its verification file; the operator's landing page is this one.
  await page.route(`${redirectUri}?**`, (route) => route.fulfill({ status: 200, contentType: 'text/plain', body: 'operator: connected' }));
  await page.click('#cn-approve');
  await page.waitForURL((url) => url.href.startsWith(redirectUri), { timeout: 20_000 });
  const landed = new URL(page.url());
  assert.equal(`${landed.origin}${landed.pathname}`, redirectUri);
  assert.equal(landed.searchParams.get('state'), state);
  assert.equal(landed.searchParams.get('iss'), server.baseUrl);
  const code = landed.searchParams.get('code') ?? '';
  assert.match(code, /^[A-Za-z0-9_-]{43}$/);
  assert.deepEqual(tab.problems, []);

  // The operator exchanges the code (HTTP Basic) for the connection, once.
  const basic = { authorization: `Basic ${Buffer.from(`${op.id}:${op.secret}`).toString('base64')}` };
  const exchanged = expectStatus(await call<{ connection_id: string; sub: string; max_agents: number }>(server, 'POST', '/api/v1/operator/token', { code, code_verifier: verifier, redirect_uri: redirectUri }, basic), 200, 'code exchange');
  assert.match(exchanged.body.connection_id, /^cn_/);
  assert.equal(exchanged.body.max_agents, 5);
  expectStatus(await call(server, 'POST', '/api/v1/operator/token', { code, code_verifier: verifier, redirect_uri: redirectUri }, basic), 400, 'the code is single-use');

  // Deny: back to the operator with error=access_denied and the state.
  await page.goto(link.toString());
  await page.waitForFunction(() => !(document.getElementById('cn-deny') as HTMLButtonElement).disabled);
  await page.click('#cn-deny');
  await page.waitForURL((url) => url.href.startsWith(redirectUri) && url.searchParams.has('error'), { timeout: 20_000 });
  const denied = new URL(page.url());
  assert.deepEqual(Object.fromEntries(denied.searchParams), { error: 'access_denied', state, iss: server.baseUrl });

  // A link with plain PKCE: an error page where the person is, no redirect.
  const plain = new URL(link);
  plain.searchParams.set('code_challenge_method', 'plain');
  const answer = await page.goto(plain.toString());
  assert.equal(answer?.status(), 400);
  assert.equal(new URL(page.url()).origin, new URL(server.baseUrl).origin);
  assert.equal(await page.locator('h1').textContent(), 'This connection link does not work');
  await expectNoSidewaysScroll(page, 'the error page');
});

test('a person who is signed out follows the link, signs in from the consent page and is brought back to it', { timeout: 90_000 }, async () => {
  assert.ok(admin, 'the first test registered the admin');
  const redirectUri = `${site.origin}/back`;
  const op = await admin.ok<{ id: string; verification: { line: string } }>('POST', '/api/operators', { name: 'Back agents', redirect_uris: [redirectUri], browser: 'user' });
  site.serve({ status: 200, body: `${op.verification.line}\n` });
  await admin.ok('POST', `/api/operators/${op.id}/verify`);
  await admin.ok('POST', `/api/admin/operators/${op.id}/status`, { enabled: true });

  // The person has an account (and a passkey) but opens the operator's link in a browser where they are signed out.
  const email = `back.${Date.now()}@example.com`;
  const first = await openOwnerTab(browser, PHONE);
  await signUp(first.page, server.baseUrl, email);
  await first.page.locator('#passkey-setup').waitFor({ state: 'visible' });
  await first.page.click('#passkey-setup-button');
  await first.page.locator('#passkey-setup').waitFor({ state: 'hidden' });
  await first.context.clearCookies();
  const link = new URL('/connect', server.baseUrl);
  for (const [k, v] of Object.entries({ operator: op.id, redirect_uri: redirectUri, state: 'st-back', code_challenge: createHash('sha256').update('v'.repeat(43)).digest('base64url'), code_challenge_method: 'S256' })) link.searchParams.set(k, v);
  const { page } = first;
  await page.goto(link.toString());
  const signIn = page.locator('#cn-sign-in');
  await signIn.waitFor({ state: 'visible' });
  await Promise.all([page.waitForURL((url) => url.pathname === '/app', { timeout: 20_000 }), signIn.click()]);
  // The app offers this browser's passkey as it opens signed out; the virtual authenticator answers
  // at once as a person's touch would, and the app, signed in, goes back to the consent link.
  await page.waitForURL((url) => url.pathname === '/connect', { timeout: 20_000 });
  assert.equal(page.url(), link.toString(), 'back on the very same consent link');
  await page.waitForFunction(() => !(document.getElementById('cn-approve') as HTMLButtonElement).disabled);
  assert.equal(await page.locator('h1').textContent(), 'Connect Back agents?');
  await first.context.close();

  // In a browser without the passkey, the password form signs in, and the app also goes back (there,
  // approving still asks for the passkey: finish takes only an assertion).
  const other = await openOwnerTab(browser, PHONE);
  await other.page.goto(link.toString());
  await other.page.locator('#cn-sign-in').waitFor({ state: 'visible' });
  await other.page.click('#cn-sign-in');
  await other.page.locator('#signed-out').waitFor({ state: 'visible' });
  await other.page.fill('#signin-email', email);
  await other.page.fill('#signin-password', 'correct horse battery');
  await other.page.click('#signin-password-button');
  await other.page.waitForURL((url) => url.pathname === '/connect', { timeout: 20_000 });
  assert.equal(other.page.url(), link.toString());
  await other.page.waitForFunction(() => !(document.getElementById('cn-approve') as HTMLButtonElement).disabled);
  await other.context.close();
});
