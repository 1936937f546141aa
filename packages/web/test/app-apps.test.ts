import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { detailsDigestOf } from '@mandate/protocol';
import { launchChromium } from '../../server/test/helpers/browser.ts';
import { call, expectStatus } from '../../server/test/helpers/over-http.ts';
import { startServer, type ServerProcess } from '../../server/test/helpers/server-process.ts';
import { MetadataDocumentSite } from '../../server/test/helpers/stand-ins/metadata-documents.ts';
import { type AgentKey, agentKey } from './helpers/agent-runner.ts';
import {
  type OwnerTab, PHONE, createAgent, expectNoError, expectNoSidewaysScroll, goTo, openOwnerTab, requestCard, screenshot, sessionCookie, signUp,
} from './helpers/owner-app.ts';

// Connected apps in the owner app (decisions §28), on a phone in Chromium, with real processes: the
// service, an MCP client's site on 127.0.0.1 publishing its Client ID Metadata Document, and the
// owner, whose passkey lives in a virtual authenticator. The owner approves the app in the browser
// for two resources (the consent page); the Agents view lists it apart from the agents, with each
// resource and its scopes; one resource is revoked. The app redeems its code at /oidc/token for a
// pass, and its server asks the owner about one call of a tool with that pass (a site step-up): the
// card names the app, the tool, the resource and the arguments, and is approved with the passkey.
// Last, the whole app is revoked and its pass refused. The tests run in order.

const TOOLS = 'https://tools.example/mcp';
const FILES = 'https://files.example/mcp/v1';
const ARGS = { path: '/reports/2026-q4.pdf', to: 'accountant@example.com' };
const SUMMARY = 'path: /reports/2026-q4.pdf\nto: accountant@example.com';

let server: ServerProcess;
let browser: Browser;
let site: MetadataDocumentSite;
let key: AgentKey;
let phone: OwnerTab;
const dataDir = mkdtempSync(join(tmpdir(), 'mandate-app-apps-'));
let clientId = '';
let redirectUri = '';
/** The host the app is marked with: its client_id's (the stand-in's 127.0.0.1:port). */
let host = '';
/** The app's name as the approval made it: the client's name and its host. */
let appName = '';
let appId = '';
let cookie = '';
/** The code of the approval for FILES, and its PKCE verifier: redeemed by the app for its pass. */
let filesCode = { code: '', verifier: '' };
/** The app's pass for FILES (from /oidc/token in the tool-call test; revoking the app refuses it). */
let pass = '';

/** The owner approves the app for `resource` on the consent page with the passkey; answers the code and the verifier. */
async function approveApp(resource: string, scope: string): Promise<{ code: string; verifier: string }> {
  const { page } = phone;
  const verifier = randomBytes(32).toString('base64url');
  const link = new URL('/oidc/authorize', server.baseUrl);
  const params = {
    response_type: 'code', client_id: clientId, redirect_uri: redirectUri, resource, scope, state: randomBytes(6).toString('hex'),
    code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256',
  };
  for (const [k, v] of Object.entries(params)) link.searchParams.set(k, v);
  await page.goto(link.toString());
  await page.waitForFunction(() => !(document.getElementById('cn-approve') as HTMLButtonElement).disabled);
  await page.click('#cn-approve');
  await page.waitForURL((url) => url.href.startsWith(redirectUri), { timeout: 20_000 });
  const code = new URL(page.url()).searchParams.get('code');
  assert.ok(code, page.url());
  return { code, verifier };
}

before(async () => {
  browser = await launchChromium('owner app (connected apps)');
  site = await new MetadataDocumentSite().start();
  server = await startServer({ env: { DATABASE_URL: '', DATA_DIR: dataDir, OUTBOUND_ALLOW_LOOPBACK: 'true' } });
  key = await agentKey();
  redirectUri = `${site.origin}/callback`;
  clientId = site.serve('/assistant.json', { body: { client_id: `${site.origin}/assistant.json`, client_name: 'Assistant', redirect_uris: [redirectUri] }, headers: { 'cache-control': 'max-age=3600' } });
  host = new URL(site.origin).host;
  appName = `Assistant (${host})`;

  phone = await openOwnerTab(browser, PHONE);
  const { page } = phone;
  await signUp(page, server.baseUrl, `apps.${Date.now()}@example.com`);
  await page.locator('#passkey-setup').waitFor({ state: 'visible' });
  await page.click('#passkey-setup-button');
  await page.locator('#passkey-setup').waitFor({ state: 'hidden' });
  await createAgent(page, 'shopper', key.publicJwk);
  cookie = await sessionCookie(phone.context, server.baseUrl);

  // The redirect URI's page is the client's business: the browser lands on a plain answer.
  await page.route(`${redirectUri}?**`, (route) => route.fulfill({ status: 200, contentType: 'text/plain', body: 'client: signed in' }));
  await approveApp(TOOLS, 'tools:read tools:call');
  filesCode = await approveApp(FILES, 'files:send');
  const agents = await call<{ id: string; kind: string }[]>(server, 'GET', '/api/agents', undefined, { cookie });
  appId = agents.body.find((a) => a.kind === 'app')?.id ?? '';
  assert.ok(appId, JSON.stringify(agents.body));
  await page.goto(`${server.baseUrl}/app`);
  await page.locator('#signed-in').waitFor({ state: 'visible' });
});

after(async () => {
  await browser?.close();
  await server?.stop();
  await site?.stop();
  key?.remove();
  rmSync(dataDir, { recursive: true, force: true });
});

test('the Agents view lists the app under "Connected apps", apart from the agents: its host, client id, each resource with its scopes; no key', { timeout: 60_000 }, async () => {
  const { page } = phone;
  const view = await goTo(page, 'agents');
  const section = view.getByRole('region', { name: 'Connected apps' });
  await section.waitFor();
  const card = section.getByRole('article', { name: appName });
  await card.waitFor();
  assert.equal(await card.locator('.client-host').textContent(), host);
  assert.equal(await card.locator('.client-id').textContent(), clientId);
  const list = card.getByRole('list', { name: `Where ${appName} may act` });
  const rows = list.getByRole('listitem');
  assert.equal(await rows.count(), 2);
  const tools = list.getByRole('listitem', { name: TOOLS });
  assert.deepEqual(await tools.locator('.chip').allTextContents(), ['tools:read', 'tools:call']);
  assert.match((await tools.locator('.approved').textContent()) ?? '', /^Approved /);
  assert.deepEqual(await list.getByRole('listitem', { name: FILES }).locator('.chip').allTextContents(), ['files:send']);
  // An app has no key: nothing of what only keyed agents have (key, reputation, approval modes, unblock/delete).
  const text = (await card.textContent()) ?? '';
  for (const absent of ['Key', 'Reputation', 'Last status']) assert.equal(await card.locator('dt').filter({ hasText: new RegExp(`^${absent}$`) }).count(), 0, absent);
  assert.ok(!/thumbprint/i.test(text));
  assert.equal(await card.getByRole('button', { name: /Unblock|Delete/ }).count(), 0);
  // The app is not among the agents, and the agent not among the apps.
  assert.equal(await view.locator('#agents article[data-agent]', { hasText: 'Assistant' }).count(), 0);
  assert.equal(await view.locator('#agents article[data-agent]', { hasText: 'shopper' }).count(), 1);
  assert.equal(await section.locator('article', { hasText: 'shopper' }).count(), 0);
  await expectNoSidewaysScroll(page, 'Agents with a connected app');
  await section.scrollIntoViewIfNeeded();
  await screenshot(page, 'connected-apps');
  await expectNoError(page);
});

test('revoking one resource: confirmed first; the app stays with the other one, and the grant is revoked', { timeout: 60_000 }, async () => {
  const { page } = phone;
  const card = page.getByRole('region', { name: 'Connected apps' }).getByRole('article', { name: appName });
  await card.getByRole('button', { name: `Revoke ${appName} at ${TOOLS}` }).click();
  await card.locator('.confirm-question', { hasText: `Revoke ${appName} at ${TOOLS}? That server refuses its passes at once if it checks with Mandate; if it checks passes itself, within a second while connected to Mandate's revocation stream, within a minute otherwise. The app keeps what it may do elsewhere.` }).waitFor();
  await card.getByRole('button', { name: 'Revoke', exact: true }).click();
  await card.getByRole('listitem', { name: TOOLS }).waitFor({ state: 'detached' });
  await card.getByRole('listitem', { name: FILES }).waitFor();
  const grants = await call<{ id: string; resource: string | null }[]>(server, 'GET', '/api/grants', undefined, { cookie });
  assert.deepEqual(grants.body.filter((g) => g.resource !== null).map((g) => g.resource), [FILES]);
  // Access names the app's grant by its resource, not only the host.
  const access = await goTo(page, 'access');
  await access.getByRole('article', { name: `${appName} at ${FILES}` }).waitFor();
  assert.equal(await access.getByRole('article', { name: `${appName} at ${TOOLS}` }).count(), 0);
  await expectNoError(page);
});

test("a call of the app's tool that its server asks about: the card names the app, its host, the tool, the resource and the arguments; approved with the passkey", { timeout: 60_000 }, async () => {
  const { page } = phone;
  // The app redeems its code as an MCP client does (PKCE, the resource again; no DPoP proof: a bearer pass).
  const res = await fetch(`${server.url}/oidc/token`, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', client_id: clientId, code: filesCode.code, code_verifier: filesCode.verifier, redirect_uri: redirectUri, resource: FILES }).toString(),
  });
  const tokens = (await res.json()) as { access_token?: string };
  assert.equal(res.status, 200, JSON.stringify(tokens));
  pass = tokens.access_token ?? '';
  const filed = await call<{ txn_id: string }>(server, 'POST', '/api/v1/stepup/site', { access_token: pass, action: 'send_file', details: { summary: SUMMARY, digest: detailsDigestOf(ARGS) } });
  expectStatus(filed, 200, 'site step-up with the app\'s pass');
  const txn = filed.body.txn_id;

  await goTo(page, 'requests');
  const card = await requestCard(page, txn);
  assert.equal(await card.getAttribute('aria-label'), `Run a tool: ${appName} at ${FILES}`);
  assert.equal(await card.locator('.kind').textContent(), 'Run a tool');
  assert.equal(await card.locator('h3').textContent(), `${appName} asks to run send_file at ${FILES}`);
  assert.equal(await card.locator('.bound-details figcaption').textContent(), 'Arguments');
  // The summary as written: its line break kept, as text.
  assert.equal(await card.locator('.details-summary').textContent(), SUMMARY);
  await card.getByText('This approval is bound to exactly these arguments.').waitFor();
  assert.ok(((await card.locator('.meta').textContent()) ?? '').startsWith(`App ${clientId} · asked `));
  await expectNoSidewaysScroll(page, 'the card of an app\'s tool call');
  await screenshot(page, 'app-tool-call');

  await card.getByRole('button', { name: 'Approve' }).click();
  await card.locator('.outcome.ok').waitFor();
  assert.equal(await card.locator('.outcome').textContent(), `Approved: ${appName} may run send_file at ${FILES} once, with exactly these arguments.`);
  const answer = await call<{ status: string; stepup_token?: string }>(server, 'GET', `/api/v1/stepup/site/${txn}`, undefined, { authorization: `Bearer ${pass}` });
  assert.equal(answer.body.status, 'approved', JSON.stringify(answer.body));
  assert.ok(answer.body.stepup_token, 'the server collects the one-time step-up token');
  await expectNoError(page);
});

test('an app blocked through its flag says so and offers Unblock; unblocked, it may act nowhere until approved again', { timeout: 60_000 }, async () => {
  const { page } = phone;
  expectStatus(await call(server, 'POST', `/api/agents/${appId}/flag`, { flag: 'revoked' }, { cookie }), 200, 'block the app');
  await goTo(page, 'requests');
  const view = await goTo(page, 'agents');
  const card = view.getByRole('region', { name: 'Connected apps' }).getByRole('article', { name: appName });
  await card.locator('.flag.revoked', { hasText: 'Revoked' }).waitFor();
  await card.getByText('Revoked everywhere: every server refuses its passes.').waitFor();
  await card.getByRole('button', { name: `Unblock ${appName}` }).click();
  await card.locator('.flag.ok', { hasText: 'Connected' }).waitFor();
  // Blocking ended its access everywhere; unblocking does not bring it back.
  await card.locator('.no-resources', { hasText: 'Nowhere now.' }).waitFor();
  assert.equal(await card.getByRole('button', { name: `Unblock ${appName}` }).count(), 0);
  await expectNoError(page);
});

test('revoking the whole app: confirmed first; its card and the section go, and its pass is refused', { timeout: 60_000 }, async () => {
  const { page } = phone;
  const view = await goTo(page, 'agents');
  const section = view.getByRole('region', { name: 'Connected apps' });
  const card = section.getByRole('article', { name: appName });
  await card.getByRole('button', { name: `Revoke ${appName}`, exact: true }).click();
  await card.locator('.confirm-question', { hasText: `Revoke ${appName}? It may no longer act for you anywhere` }).waitFor();
  await card.getByRole('button', { name: 'Revoke app' }).click();
  await card.waitFor({ state: 'detached' });
  await section.waitFor({ state: 'hidden' });
  const agents = await call<{ id: string }[]>(server, 'GET', '/api/agents', undefined, { cookie });
  assert.ok(!agents.body.some((a) => a.id === appId));
  // The pass it got before is refused from that moment.
  const refused = await call(server, 'POST', '/api/v1/stepup/site', { access_token: pass, action: 'send_file' });
  assert.deepEqual([refused.status, refused.body['detail']], [403, 'agent revoked by its owner']);
  await expectNoError(page);
});
