import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Locator } from 'playwright-core';
import { launchChromium } from '../../server/test/helpers/browser.ts';
import { startServer, type ServerProcess } from '../../server/test/helpers/server-process.ts';
import { call, expectStatus } from '../../server/test/helpers/over-http.ts';
import { type OwnerTab, expectNoError, expectNoSidewaysScroll, openOwnerTab, openSites, sessionCookie, signUp } from './helpers/owner-app.ts';

// "Sites you run": an owner who runs a website registers it as an OIDC client in the app, on a
// 360 px phone, against the service as its own process. The site is a tiny HTTP server on
// 127.0.0.1 (loopback is allowed for tests, decisions §24) that serves /.well-known/service-site.txt
// with whatever the test puts there. The tests run in order and build on each other.

const PHONE_360 = { width: 360, height: 740 } as const;

let server: ServerProcess;
let browser: Browser;
let site: Server;
let siteUrl = '';
/** What the site serves at /.well-known/service-site.txt; null: 404. */
let siteFile: string | null = null;
let phone: OwnerTab;
let cookie = '';
let clientId = '';
let firstSecret = '';
const NAME = 'Example Shop';

interface ClientOut {
  client_id: string;
  name: string;
  redirect_uris: string[];
  public: boolean;
  verified: boolean;
  verification: { url: string; urls: string[]; line: string };
}

before(async () => {
  site = createServer((req, res) => {
    if (req.url === '/.well-known/service-site.txt' && siteFile !== null) {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(siteFile);
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  [browser, server] = await Promise.all([
    launchChromium('sites you run'),
    startServer({ env: { DATABASE_URL: '', OUTBOUND_ALLOW_LOOPBACK: 'true' } }),
  ]);
});

after(async () => {
  await browser?.close();
  await server?.stop();
  await new Promise((resolve) => site?.close(resolve));
});

const clients = async (): Promise<ClientOut[]> => expectStatus(await call<ClientOut[]>(server, 'GET', '/api/oidc/clients', undefined, { cookie }), 200, 'clients').body;
const card = (): Locator => phone.page.locator(`#sites article[data-client="${clientId}"]`);
const secretBox = (): Locator => phone.page.locator('#site-secret');

test('from Account, "Sites you run" registers a confidential client: the secret shows once, the client is listed here and by the API', { timeout: 60_000 }, async () => {
  phone = await openOwnerTab(browser, PHONE_360);
  const { page, context } = phone;
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.baseUrl });
  await signUp(page, server.baseUrl, `sites.${Date.now()}@example.com`);
  cookie = await sessionCookie(context, server.baseUrl);

  await openSites(page);
  assert.equal(await page.locator('#tabs a[data-view="account"]').getAttribute('aria-current'), 'page', 'the Account tab stays marked');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'sites-title', 'the keyboard lands on the heading');
  await page.locator('#sites-empty').waitFor({ state: 'visible' });

  const form = page.getByRole('form', { name: 'Register a site' });
  await form.getByLabel('Name').fill(NAME);
  await form.getByLabel('Redirect URIs').fill(`${siteUrl}/callback\n\n`);
  assert.equal(await form.getByRole('checkbox', { name: /Public client/ }).isChecked(), false);
  await form.getByRole('button', { name: 'Register site' }).click();

  const box = secretBox();
  await box.waitFor({ state: 'visible' });
  await expectNoError(page);
  assert.equal(await page.getByRole('region', { name: `Client secret for ${NAME}` }).count(), 1);
  assert.match((await box.textContent()) ?? '', /will not be shown again/);
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'site-secret', 'the secret box has the focus');
  firstSecret = (await box.locator('.secret-value').textContent()) ?? '';
  assert.ok(firstSecret.length >= 20, `a secret is shown: "${firstSecret}"`);
  await box.getByRole('button', { name: `Copy the client secret of ${NAME}` }).click();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), firstSecret, 'Copy puts the secret on the clipboard');

  const listed = await clients();
  assert.equal(listed.length, 1);
  clientId = listed[0]?.client_id ?? '';
  assert.match(clientId, /^c_/);
  assert.deepEqual([listed[0]?.name, listed[0]?.redirect_uris, listed[0]?.public, listed[0]?.verified], [NAME, [`${siteUrl}/callback`], false, false]);
  assert.doesNotMatch(JSON.stringify(listed), new RegExp(firstSecret), 'the API never shows the secret again');

  const shown = card();
  await shown.waitFor();
  assert.equal(await shown.locator('h3').textContent(), NAME);
  assert.equal(await shown.locator('.client-id').textContent(), clientId);
  assert.equal(await shown.locator('.flag').textContent(), 'Not verified');
  assert.match((await shown.textContent()) ?? '', new RegExp(`${siteUrl}/callback`));
  assert.equal(await shown.locator('.verify-line').textContent(), listed[0]?.verification.line);
  assert.equal(await shown.getByRole('link', { name: `${siteUrl}/.well-known/service-site.txt` }).count(), 1, 'where to put the line');
  await expectNoSidewaysScroll(page, 'the secret and the new card at 360 px');

  // Gone after a reload: nothing kept it.
  await page.reload();
  await card().waitFor();
  assert.equal(await secretBox().isVisible(), false);
  assert.ok(!(await page.content()).includes(firstSecret), 'the secret is nowhere in the page');
});

test('a bad redirect URI: the form shows the service\'s own reason and keeps what was typed', { timeout: 30_000 }, async () => {
  const { page } = phone;
  const bad = { name: 'Bad site', redirect_uris: ['ftp://shop.example/callback'] };
  const answer = await call<{ detail: string }>(server, 'POST', '/api/oidc/clients', { ...bad, public: false }, { cookie, origin: server.baseUrl });
  expectStatus(answer, 400, 'a bad redirect URI');
  const form = page.getByRole('form', { name: 'Register a site' });
  await form.getByLabel('Name').fill(bad.name);
  await form.getByLabel('Redirect URIs').fill(bad.redirect_uris[0] ?? '');
  await form.getByRole('button', { name: 'Register site' }).click();
  const error = page.locator('#site-form-error');
  await error.waitFor({ state: 'visible' });
  const text = (await error.textContent()) ?? '';
  assert.ok(text.toLowerCase().includes(answer.body.detail.toLowerCase().replace(/\.$/, '')), `"${text}" carries "${answer.body.detail}"`);
  assert.equal(await form.getByLabel('Redirect URIs').inputValue(), bad.redirect_uris[0]);
  await expectNoSidewaysScroll(page, 'the form\'s error at 360 px');
  assert.equal((await clients()).length, 1, 'nothing was registered');
  await form.getByLabel('Name').fill('');
  await form.getByLabel('Redirect URIs').fill('');
});

test('edit: Escape leaves the form as it was; Save changes the name on the card and at the API', { timeout: 30_000 }, async () => {
  const { page } = phone;
  await card().getByRole('button', { name: `Edit ${NAME}` }).click();
  const form = page.getByRole('form', { name: `Edit ${NAME}` });
  await form.waitFor();
  assert.equal(await form.getByLabel('Name').evaluate((n) => n === document.activeElement), true, 'the name field has the focus');
  assert.equal(await form.getByLabel('Redirect URIs').inputValue(), `${siteUrl}/callback`);
  await page.keyboard.press('Escape');
  await form.waitFor({ state: 'detached' });
  assert.equal(await card().getByRole('button', { name: `Edit ${NAME}` }).evaluate((n) => n === document.activeElement), true, 'back on Edit');

  await page.keyboard.press('Enter');
  await form.getByLabel('Name').fill(`${NAME} EU`);
  await expectNoSidewaysScroll(page, 'the edit form at 360 px');
  await form.getByRole('button', { name: 'Save' }).click();
  await card().locator('h3', { hasText: `${NAME} EU` }).waitFor();
  await expectNoError(page);
  assert.equal((await clients())[0]?.name, `${NAME} EU`);
});

test('a new secret: asked first, then shown once, different from the first', { timeout: 30_000 }, async () => {
  const { page } = phone;
  const rotate = () => card().getByRole('button', { name: `Make a new secret for ${NAME} EU` });
  await rotate().click();
  assert.match((await card().locator('.confirm-question').textContent()) ?? '', /current secret stops working/);
  await card().getByRole('button', { name: 'Cancel' }).click();
  await rotate().click();
  await card().getByRole('button', { name: 'Make a new secret' }).click();
  const box = secretBox();
  await box.locator('h2', { hasText: `New client secret for ${NAME} EU` }).waitFor();
  const second = (await box.locator('.secret-value').textContent()) ?? '';
  assert.ok(second.length >= 20);
  assert.notEqual(second, firstSecret, 'a different secret');
  await expectNoError(page);
  await box.getByRole('button', { name: 'I have saved it' }).click();
  await box.waitFor({ state: 'hidden' });
  assert.ok(!(await page.content()).includes(second), 'cleared from the page');
});

test('verification: "Check now" says what the site served; once it serves the line the page shows, the client is verified', { timeout: 30_000 }, async () => {
  const { page } = phone;
  const check = () => card().getByRole('button', { name: `Check now that you run ${NAME} EU` });
  await check().click();
  const error = card().locator('.card-error');
  await error.waitFor({ state: 'visible' });
  assert.match((await error.textContent()) ?? '', /404/, 'the file is not there yet');
  await expectNoSidewaysScroll(page, 'the service\'s reason, with its long URL, at 360 px');

  const line = (await card().locator('.verify-line').textContent()) ?? '';
  assert.match(line, new RegExp(`^mandate-client=${clientId}:`));
  siteFile = `# other things this site says\nmandate-client=c_someoneelse:abc\n${line}\n`;
  await check().click();
  await card().locator('.flag', { hasText: /^Verified$/ }).waitFor();
  await expectNoError(page);
  assert.equal(await card().locator('.site-verify').count(), 0, 'no instructions any more');
  assert.equal(await card().evaluate((n) => n === document.activeElement), true, 'the keyboard stays on the card');
  assert.equal((await clients())[0]?.verified, true);
});

test('a public client gets no secret, and may be registered with the keyboard alone', { timeout: 30_000 }, async () => {
  const { page } = phone;
  await page.locator('#site-name').focus();
  await page.keyboard.type('Shop app');
  await page.keyboard.press('Tab');
  await page.keyboard.type(`${siteUrl}/app-callback`);
  await page.keyboard.press('Tab'); // the logout URI, left empty
  await page.keyboard.press('Tab');
  await page.keyboard.press('Space'); // public
  await page.keyboard.press('Tab');
  await page.keyboard.press('Enter'); // Register site
  const listed = await (async () => {
    await page.locator('#sites article h3', { hasText: 'Shop app' }).waitFor();
    return clients();
  })();
  const app = listed.find((c) => c.name === 'Shop app');
  assert.equal(app?.public, true);
  assert.equal(await secretBox().isVisible(), false, 'no secret to show');
  const appCard = page.locator(`#sites article[data-client="${app?.client_id}"]`);
  assert.equal(await appCard.evaluate((n) => n === document.activeElement), true, 'the new card has the focus');
  assert.equal(await appCard.getByRole('button', { name: /new secret/i }).count(), 0, 'a public client has no secret to rotate');
  await expectNoError(page);
});

test('delete: asked first, then gone from the page and the API', { timeout: 30_000 }, async () => {
  const { page } = phone;
  await card().getByRole('button', { name: `Delete ${NAME} EU` }).click();
  await card().getByRole('button', { name: 'Delete for good' }).click();
  await card().waitFor({ state: 'detached' });
  await expectNoError(page);
  assert.deepEqual((await clients()).map((c) => c.name), ['Shop app']);
});

test('everything fit a 360 px phone; no script errors, CSP violations or server errors', { timeout: 30_000 }, async () => {
  const { page } = phone;
  await expectNoSidewaysScroll(page, 'sites at 360 px');
  assert.deepEqual(phone.problems, []);
  await phone.context.close();
});
