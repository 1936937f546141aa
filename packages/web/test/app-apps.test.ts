import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { detailsDigestOf } from '@mandate/protocol';
import { call, expectStatus } from '../../server/test/helpers/over-http.ts';
import { AppDatabase, type ConnectedApp } from './helpers/connected-app.ts';
import {
  type OwnerAppRig, type OwnerTab, expectNoError, expectNoSidewaysScroll, goTo, ownerWithAgent, requestCard, sessionCookie, startOwnerAppRig,
} from './helpers/owner-app.ts';

// Connected apps in the owner app (decisions §28), on a phone in Chromium against a real server: an
// app the owner approved in the browser is listed apart from the agents, with each resource it may
// act at and its scopes; one resource, then the whole app, is revoked; a call of its tool that its
// server asks the owner about (a site step-up with the app's pass) is a card naming the app, the tool,
// the resource and the arguments, approved with the passkey. The tests run in order.

const CLIENT_ID = 'https://assistant.example/oauth/client.json';
const TOOLS = 'https://tools.example/mcp';
const FILES = 'https://files.example/mcp/v1';
const ARGS = { path: '/reports/2026-q4.pdf', to: 'accountant@example.com' };
const SUMMARY = 'path: /reports/2026-q4.pdf\nto: accountant@example.com';

let rig: OwnerAppRig;
let phone: OwnerTab;
let db: AppDatabase;
let app: ConnectedApp;
let userId = '';
let cookie = '';

before(async () => {
  rig = await startOwnerAppRig('owner app (connected apps)');
  ({ tab: phone } = await ownerWithAgent(rig, { email: `apps.${Date.now()}@example.com`, agentName: 'shopper' }));
  cookie = await sessionCookie(phone.context, rig.server.baseUrl);
  const me = await call<{ id: string }>(rig.server, 'GET', '/api/me', undefined, { cookie });
  userId = expectStatus(me, 200, 'me').body.id;
  db = await AppDatabase.open(rig.dataDir);
  app = await db.connect(userId, { clientId: CLIENT_ID, name: 'Assistant', resources: [{ resource: TOOLS, scopes: ['tools:read', 'tools:call'] }, { resource: FILES, scopes: ['files:send'] }] });
});

after(async () => {
  await db?.close();
  await rig?.close();
});

const grantOf = (resource: string) => {
  const g = app.grants.find((x) => x.resource === resource);
  assert.ok(g, resource);
  return g;
};

test('the Agents view lists the app under "Connected apps", apart from the agents: its host, client id, each resource with its scopes; no key', { timeout: 60_000 }, async () => {
  const { page } = phone;
  // Adding the agent left the Agents view open: coming back to it loads the list again.
  await goTo(page, 'requests');
  const view = await goTo(page, 'agents');
  const section = view.getByRole('region', { name: 'Connected apps' });
  await section.waitFor();
  const card = section.getByRole('article', { name: 'Assistant' });
  await card.waitFor();
  assert.equal(await card.locator('.client-host').textContent(), 'assistant.example');
  assert.equal(await card.locator('.client-id').textContent(), CLIENT_ID);
  const list = card.getByRole('list', { name: 'Where Assistant may act' });
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
  assert.equal(await section.locator('article', { hasText: 'shopper' }).count(), 0);
  await expectNoSidewaysScroll(page, 'Agents with a connected app');
  await expectNoError(page);
});

test('revoking one resource: confirmed first; the app stays with the other one, and the grant is revoked', { timeout: 60_000 }, async () => {
  const { page } = phone;
  const card = page.getByRole('region', { name: 'Connected apps' }).getByRole('article', { name: 'Assistant' });
  await card.getByRole('button', { name: `Revoke Assistant at ${TOOLS}` }).click();
  await card.locator('.confirm-question', { hasText: `Revoke Assistant at ${TOOLS}? That server refuses its passes at once if it checks with Mandate, within about a minute if it checks passes itself. The app keeps what it may do elsewhere.` }).waitFor();
  await card.getByRole('button', { name: 'Revoke', exact: true }).click();
  await card.getByRole('listitem', { name: TOOLS }).waitFor({ state: 'detached' });
  await card.getByRole('listitem', { name: FILES }).waitFor();
  const grants = await call<{ id: string; resource: string | null }[]>(rig.server, 'GET', '/api/grants', undefined, { cookie });
  assert.deepEqual(grants.body.filter((g) => g.resource !== null).map((g) => g.resource), [FILES]);
  await expectNoError(page);
});

test("a call of the app's tool that its server asks about: the card names the app, its host, the tool, the resource and the arguments; approved with the passkey", { timeout: 60_000 }, async () => {
  const { page } = phone;
  const pass = await db.pass(rig.server.baseUrl, userId, app, grantOf(FILES));
  const filed = await call<{ txn_id: string }>(rig.server, 'POST', '/api/v1/stepup/site', { access_token: pass, action: 'send_file', details: { summary: SUMMARY, digest: detailsDigestOf(ARGS) } });
  expectStatus(filed, 200, 'site step-up with the app\'s pass');
  const txn = filed.body.txn_id;

  await goTo(page, 'requests');
  const card = await requestCard(page, txn);
  assert.equal(await card.getAttribute('aria-label'), `Run a tool: Assistant (assistant.example) at ${FILES}`);
  assert.equal(await card.locator('.kind').textContent(), 'Run a tool');
  assert.equal(await card.locator('h3').textContent(), `Assistant (assistant.example) asks to run send_file at ${FILES}`);
  assert.equal(await card.locator('.bound-details figcaption').textContent(), 'Arguments');
  // The summary as written: its line break kept, as text.
  assert.equal(await card.locator('.details-summary').textContent(), SUMMARY);
  await card.getByText('This approval is bound to exactly these arguments.').waitFor();
  assert.match((await card.locator('.meta').textContent()) ?? '', new RegExp(`^App ${CLIENT_ID.replaceAll('.', '\\.')} · asked `));
  await expectNoSidewaysScroll(page, 'the card of an app\'s tool call');

  await card.getByRole('button', { name: 'Approve' }).click();
  await card.locator('.outcome.ok').waitFor();
  assert.equal(await card.locator('.outcome').textContent(), `Approved: Assistant may run send_file at ${FILES} once, with exactly these arguments.`);
  const answer = await call<{ status: string }>(rig.server, 'GET', `/api/v1/stepup/site/${txn}`, undefined, { authorization: `Bearer ${pass}` });
  assert.equal(answer.body.status, 'approved', JSON.stringify(answer.body));
  await expectNoError(page);
});

test('revoking the whole app: confirmed first; its card and the section go, and its pass is refused', { timeout: 60_000 }, async () => {
  const { page } = phone;
  const view = await goTo(page, 'agents');
  const section = view.getByRole('region', { name: 'Connected apps' });
  const card = section.getByRole('article', { name: 'Assistant' });
  await card.getByRole('button', { name: 'Revoke Assistant', exact: true }).click();
  await card.locator('.confirm-question', { hasText: 'Revoke Assistant? It may no longer act for you anywhere' }).waitFor();
  await card.getByRole('button', { name: 'Revoke app' }).click();
  await card.waitFor({ state: 'detached' });
  await section.waitFor({ state: 'hidden' });
  const agents = await call<{ id: string }[]>(rig.server, 'GET', '/api/agents', undefined, { cookie });
  assert.ok(!agents.body.some((a) => a.id === app.id));
  const pass = await db.pass(rig.server.baseUrl, userId, app, grantOf(FILES));
  const refused = await call(rig.server, 'POST', '/api/v1/stepup/site', { access_token: pass, action: 'send_file' });
  assert.deepEqual([refused.status, refused.body['detail']], [403, 'agent revoked by its owner']);
  await expectNoError(page);
});
