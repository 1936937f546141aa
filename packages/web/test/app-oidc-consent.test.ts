import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../../server/test/helpers/browser.ts';
import { startServer, type ServerProcess } from '../../server/test/helpers/server-process.ts';
import { MetadataDocumentSite } from '../../server/test/helpers/stand-ins/metadata-documents.ts';
import { type OwnerTab, PHONE, expectNoSidewaysScroll, openOwnerTab, sessionCookie, signUp } from './helpers/owner-app.ts';

// A person's browser at /oidc/authorize (decisions §28) on a phone, with real processes: the
// service, an MCP client's site on 127.0.0.1 publishing its Client ID Metadata Document, and
// Chromium as the person, whose passkey lives in a virtual authenticator. The person sees who asks
// for what, approves with the passkey and lands on the client's redirect URI with code, state and
// iss (the app then appears under Agents as an app); denies and lands with error=access_denied; is
// warned when the redirect goes elsewhere; and, signed out, signs in and comes back to the page.

let server: ServerProcess;
let browser: Browser;
let site: MetadataDocumentSite;
let tab: OwnerTab | undefined;

before(async () => {
  browser = await launchChromium('app consent page');
  site = await new MetadataDocumentSite().start();
  server = await startServer({ env: { DATABASE_URL: '', OUTBOUND_ALLOW_LOOPBACK: 'true' } });
});

after(async () => {
  await tab?.context.close().catch(() => undefined);
  await browser?.close();
  await server?.stop();
  await site?.stop();
});

const authorizeLink = (clientId: string, redirectUri: string, over: Record<string, string> = {}) => {
  const link = new URL('/oidc/authorize', server.baseUrl);
  const params = {
    response_type: 'code', client_id: clientId, redirect_uri: redirectUri, resource: 'https://mcp.example/mcp', scope: 'tools:read',
    state: `st-${randomBytes(6).toString('hex')}`, code_challenge: createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url'), code_challenge_method: 'S256', ...over,
  };
  for (const [k, v] of Object.entries(params)) link.searchParams.set(k, v);
  return { link, state: params.state };
};

test('a person approves an MCP client with a passkey on a phone, lands on its redirect URI with code, state and iss, and sees it under Agents as an app', { timeout: 120_000 }, async () => {
  const redirectUri = `${site.origin}/callback`;
  const clientId = site.serve('/claude.json', { body: { client_id: `${site.origin}/claude.json`, client_name: 'Claude', redirect_uris: [redirectUri, 'https://elsewhere.example/cb'], logo_uri: 'https://claude.example/logo.png' }, headers: { 'cache-control': 'max-age=3600' } });
  const host = new URL(site.origin).host;

  tab = await openOwnerTab(browser, PHONE);
  const { page } = tab;
  await signUp(page, server.baseUrl, `apps.${Date.now()}@example.com`);
  await page.locator('#passkey-setup').waitFor({ state: 'visible' });
  await page.click('#passkey-setup-button');
  await page.locator('#passkey-setup').waitFor({ state: 'hidden' });

  const { link, state } = authorizeLink(clientId, redirectUri);
  await page.goto(link.toString());
  assert.equal(await page.locator('h1').textContent(), 'Allow Claude?');
  assert.equal(await page.locator('.cn-domain').textContent(), host);
  assert.equal(await page.locator('#ac-what').textContent(), `Claude (${host}) wants to act for you at https://mcp.example/mcp with tools:read.`);
  // The redirect URI is on 127.0.0.1: a program on this computer receives the answer.
  assert.match((await page.locator('.cn-warning').allTextContents()).join(' '), /a program on this computer \(127\.0\.0\.1:\d+\)/);
  assert.equal(await page.locator('img').count(), 0, 'the logo is shown as text, never loaded');
  await page.waitForFunction(() => !(document.getElementById('cn-approve') as HTMLButtonElement).disabled);
  await expectNoSidewaysScroll(page, 'the app consent page');

  await page.route(`${redirectUri}?**`, (route) => route.fulfill({ status: 200, contentType: 'text/plain', body: 'client: signed in' }));
  await page.click('#cn-approve');
  await page.waitForURL((url) => url.href.startsWith(redirectUri), { timeout: 20_000 });
  const landed = new URL(page.url());
  assert.equal(landed.searchParams.get('state'), state);
  assert.equal(landed.searchParams.get('iss'), server.baseUrl);
  // The code (sealed, single use) is redeemed at /oidc/token with the PKCE verifier: the token endpoint's own tests.
  assert.match(landed.searchParams.get('code') ?? '', /^[A-Za-z0-9_-]{60,}$/, page.url());
  assert.deepEqual(tab.problems, []);

  // The app is listed like an agent: kind app, no key, named after the client and its host.
  const cookie = await sessionCookie(tab.context, server.baseUrl);
  const agents = (await (await fetch(`${server.baseUrl}/api/agents`, { headers: { cookie } })).json()) as { name: string; kind: string; client_id: string | null; jkt: string | null }[];
  assert.deepEqual(agents.map((a) => [a.name, a.kind, a.client_id, a.jkt]), [[`Claude (${host})`, 'app', clientId, null]]);

  // Deny: back to the client with error=access_denied, the state and iss.
  const second = authorizeLink(clientId, redirectUri);
  await page.goto(second.link.toString());
  await page.waitForFunction(() => !(document.getElementById('cn-deny') as HTMLButtonElement).disabled);
  await page.click('#cn-deny');
  await page.waitForURL((url) => url.href.startsWith(redirectUri) && url.searchParams.has('error'), { timeout: 20_000 });
  assert.deepEqual(Object.fromEntries(new URL(page.url()).searchParams), { error: 'access_denied', error_description: 'the person declined', state: second.state, iss: server.baseUrl });

  // A redirect URI on another host than the client_id: said before anything is approved.
  await page.goto(authorizeLink(clientId, 'https://elsewhere.example/cb').link.toString());
  assert.match((await page.locator('.cn-warning').allTextContents()).join(' '), new RegExp(`The app says it is ${host.replaceAll('.', '\\.')}, but your approval is sent to elsewhere\\.example\\.`));

  // An unknown client: an error page where the person is, no redirect.
  const unknown = await page.goto(authorizeLink('c_unknown', redirectUri).link.toString());
  assert.equal(unknown?.status(), 400);
  assert.equal(new URL(page.url()).origin, new URL(server.baseUrl).origin);
  assert.equal(await page.locator('h1').textContent(), 'This sign-in link does not work');
  await expectNoSidewaysScroll(page, 'the error page');
});

test('a person who is signed out opens the client\'s link, signs in from the consent page and is brought back to it', { timeout: 90_000 }, async () => {
  const redirectUri = `${site.origin}/back`;
  const clientId = site.serve('/back.json', { body: { client_id: `${site.origin}/back.json`, client_name: 'Back client', redirect_uris: [redirectUri] } });
  const first = await openOwnerTab(browser, PHONE);
  await signUp(first.page, server.baseUrl, `apps.back.${Date.now()}@example.com`);
  await first.page.locator('#passkey-setup').waitFor({ state: 'visible' });
  await first.page.click('#passkey-setup-button');
  await first.page.locator('#passkey-setup').waitFor({ state: 'hidden' });
  await first.context.clearCookies();
  const { link } = authorizeLink(clientId, redirectUri);
  const { page } = first;
  await page.goto(link.toString());
  const signIn = page.locator('#cn-sign-in');
  await signIn.waitFor({ state: 'visible' });
  await Promise.all([page.waitForURL((url) => url.pathname === '/app', { timeout: 20_000 }), signIn.click()]);
  // The app offers this browser's passkey as it opens signed out; signed in, it goes back to the link.
  await page.waitForURL((url) => url.pathname === '/oidc/authorize', { timeout: 20_000 });
  assert.equal(page.url(), link.toString(), 'back on the very same authorization link');
  await page.waitForFunction(() => !(document.getElementById('cn-approve') as HTMLButtonElement).disabled);
  assert.equal(await page.locator('h1').textContent(), 'Allow Back client?');
  await first.context.close();
});
