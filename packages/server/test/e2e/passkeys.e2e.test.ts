import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose';
import type { Browser, Page } from 'playwright-core';
import { addAuthenticator, expectNoError, launchChromium } from '../helpers/browser.ts';
import { startServer, type ServerProcess } from '../helpers/server-process.ts';

// The real thing: the server as its own process, Debian's Chromium driving /app like a person, and
// a virtual WebAuthn authenticator (CDP) standing in for the phone's passkey.

let server: ServerProcess | undefined;
let browser: Browser | undefined;
let base = '';
let direct = '';

before(async () => {
  browser = await launchChromium('passkey');
  server = await startServer({ env: { DATABASE_URL: '' } });
  base = server.baseUrl;
  // The server listens on 127.0.0.1; Node's own requests go there directly (no localhost lookup).
  direct = server.url;
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

async function expectSignedIn(page: Page, email: string): Promise<void> {
  await page.locator('#signed-in').waitFor({ state: 'visible' });
  assert.match((await page.locator('#whoami-name').textContent()) ?? '', new RegExp(email.replace(/[.+]/g, '\\$&')));
}

test('a person signs up, adds a passkey, signs in with it and creates an agent in Chromium', { timeout: 120_000 }, async () => {
  assert.ok(browser, 'browser launched');
  const context = await browser.newContext();
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    // A 401 from GET /api/me while signed out is expected, and so is the 403 of removing a passkey
    // from a password session below; Chrome logs them as failed resources.
    if (m.type() === 'error' && !/Failed to load resource: .* (401|403)/.test(m.text())) problems.push(`console: ${m.text()} ${m.location().url}`);
  });
  const cdp = await context.newCDPSession(page);
  const authenticatorId = await addAuthenticator(cdp);

  const email = `e2e.${Date.now()}@example.com`;
  const password = 'correct horse battery';
  await page.goto(`${base}/`);
  assert.equal(new URL(page.url()).pathname, '/app');
  await page.locator('#signed-out').waitFor({ state: 'visible' });

  // Sign up.
  await page.fill('#signup-email', email);
  await page.fill('#signup-password', password);
  await page.fill('#signup-name', 'E2E Owner');
  await page.click('#signup-button');
  await expectSignedIn(page, email);
  await expectNoError(page);

  // Register a passkey on the virtual authenticator.
  await page.fill('#passkey-name', 'Test laptop');
  await page.click('#passkey-add-button');
  await page.locator('#devices li', { hasText: 'Test laptop' }).waitFor();
  await expectNoError(page);
  const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
  assert.equal(credentials.length, 1);
  assert.equal(credentials[0]?.isResidentCredential, true, 'the passkey is discoverable');
  assert.equal(credentials[0]?.rpId, 'localhost');

  // Sign out, then back in with the passkey alone.
  await page.click('#signout');
  await page.locator('#signed-out').waitFor({ state: 'visible' });
  await page.fill('#signin-email', email);
  await page.click('#signin-passkey-button');
  await expectSignedIn(page, email);
  await expectNoError(page);
  const after = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
  assert.ok((after.credentials[0]?.signCount ?? 0) >= 1, 'the authenticator signed');

  // Create an agent by pasting its public JWK.
  const { publicKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = await exportJWK(publicKey);
  await page.fill('#agent-name', 'shopper');
  await page.fill('#agent-key', JSON.stringify(jwk, null, 2));
  await page.click('#agent-create-button');
  await page.locator('#agents li', { hasText: 'shopper' }).waitFor();
  await expectNoError(page);

  // The same session, over plain HTTP.
  const cookie = (await context.cookies(base)).find((c) => c.name === 'session');
  assert.ok(cookie, 'session cookie set');
  assert.equal(cookie.httpOnly, true);
  const headers = { cookie: `session=${cookie.value}` };
  const me = (await (await fetch(`${direct}/api/me`, { headers })).json()) as { email: string; display_name: string };
  assert.equal(me.email, email);
  assert.equal(me.display_name, 'E2E Owner');
  const devices = (await (await fetch(`${direct}/api/devices`, { headers })).json()) as { name: string; kind: string; last_used_at: string | null }[];
  assert.equal(devices.length, 1);
  assert.equal(devices[0]?.name, 'Test laptop');
  assert.equal(devices[0]?.kind, 'passkey');
  assert.ok(devices[0]?.last_used_at, 'sign-in recorded on the device');
  const agents = (await (await fetch(`${direct}/api/agents`, { headers })).json()) as { name: string; jkt: string }[];
  assert.deepEqual(agents.map((a) => a.name), ['shopper']);
  assert.equal(agents[0]?.jkt, await calculateJwkThumbprint(jwk));

  // Password sign-in from the same page still works.
  await page.click('#signout');
  await page.locator('#signed-out').waitFor({ state: 'visible' });
  await page.fill('#signin-email', email);
  await page.fill('#signin-password', password);
  await page.click('#signin-password-button');
  await expectSignedIn(page, email);
  await page.locator('#agents li', { hasText: 'shopper' }).waitFor();

  // Signed in with the password, the passkey cannot be removed: the page asks for a passkey sign-in
  // first and offers it, and after it the removal goes through.
  page.on('dialog', (d) => void d.accept());
  const remove = page.locator('#devices li', { hasText: 'Test laptop' }).getByRole('button', { name: /^Remove/ });
  await remove.click();
  await page.locator('#passkey-reauth').waitFor({ state: 'visible' });
  assert.match((await page.locator('#message').textContent()) ?? '', /sign in with one of your passkeys/);
  const now = (await context.cookies(base)).find((c) => c.name === 'session');
  const listed = (await (await fetch(`${direct}/api/devices`, { headers: { cookie: `session=${now?.value}` } })).json()) as unknown[];
  assert.equal(listed.length, 1, 'not removed by a password session');
  await page.click('#passkey-reauth-button');
  await page.locator('#passkey-reauth').waitFor({ state: 'hidden' });
  await expectNoError(page);
  await remove.click();
  await page.locator('#devices li', { hasText: 'No passkeys yet' }).waitFor();
  await expectNoError(page);

  assert.deepEqual(problems, [], 'no script errors or CSP violations on the page');
  await context.close();
});
