import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import type { Browser, Locator, Page } from 'playwright-core';
import { generateAgentKeyPair } from '@mandate/protocol';
import { launchChromium } from '../../server/test/helpers/browser.ts';
import { startServer, type ServerProcess } from '../../server/test/helpers/server-process.ts';
import { HttpOwner, call, expectStatus } from '../../server/test/helpers/over-http.ts';
import { verifyEmail } from '../../server/test/helpers/email-over-http.ts';
import { type OperatorSite, startOperatorSite } from '../../server/test/helpers/stand-ins/operator-site.ts';
import { type OwnerTab, PHONE, expectNoError, expectNoSidewaysScroll, goTo, openOwnerTab, sessionCookie, signUp } from './helpers/owner-app.ts';

// Connections in the owner app (decisions §17), on a 390 px phone, with real processes: the service,
// an operator's site on 127.0.0.1 (its domain verified for real, switched on by an admin), and
// Chromium as the person. The person connects the operator on the consent page with a passkey; the
// operator exchanges the code and adds two agents over its API. In the app the person sees the
// connection and both agents "via" the operator, lowers the limit to 1 (the newer agent is
// suspended, and its card says why), raises it back, and disconnects: both agents are gone.

const ADMIN = `admin.${Date.now()}@example.com`;
const OPERATOR = 'Acme agents';
let server: ServerProcess;
let browser: Browser;
let site: OperatorSite;
let tab: OwnerTab | undefined;

before(async () => {
  browser = await launchChromium('owner app: connections');
  site = await startOperatorSite();
  server = await startServer({ env: { DATABASE_URL: '', OUTBOUND_ALLOW_LOOPBACK: 'true', ADMIN_EMAILS: ADMIN } });
});

after(async () => {
  await tab?.context.close().catch(() => undefined);
  await browser?.close();
  await server?.stop();
  await site?.close();
});

interface Operator {
  id: string;
  redirectUri: string;
  basic: Record<string, string>;
}

/** An operator registered by an admin, its domain verified through its verification file, switched on. */
async function activeOperator(): Promise<Operator> {
  const admin = await HttpOwner.signUp(server, server.baseUrl, { email: ADMIN });
  await verifyEmail(server, admin.auth, ADMIN);
  const redirectUri = `${site.origin}/cb`;
  const op = await admin.ok<{ id: string; secret: string; verification: { line: string } }>('POST', '/api/operators', { name: OPERATOR, redirect_uris: [redirectUri], browser: 'operator' });
  site.serve({ status: 200, body: `${op.verification.line}\n` });
  await admin.ok('POST', `/api/operators/${op.id}/verify`);
  await admin.ok('POST', `/api/admin/operators/${op.id}/status`, { enabled: true });
  return { id: op.id, redirectUri, basic: { authorization: `Basic ${Buffer.from(`${op.id}:${op.secret}`).toString('base64')}` } };
}

/** The person approves the operator on the consent page with their passkey; the operator exchanges the code. */
async function connect(page: Page, op: Operator): Promise<string> {
  const verifier = randomBytes(32).toString('base64url');
  const link = new URL('/connect', server.baseUrl);
  const query = { operator: op.id, redirect_uri: op.redirectUri, state: 'st-1', code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256' };
  for (const [k, v] of Object.entries(query)) link.searchParams.set(k, v);
  await page.route(`${op.redirectUri}?**`, (route) => route.fulfill({ status: 200, contentType: 'text/plain', body: 'operator: connected' }));
  await page.goto(link.toString());
  await page.waitForFunction(() => !(document.getElementById('cn-approve') as HTMLButtonElement).disabled);
  await page.click('#cn-approve');
  await page.waitForURL((url) => url.href.startsWith(op.redirectUri), { timeout: 20_000 });
  const code = new URL(page.url()).searchParams.get('code') ?? '';
  const exchanged = await call<{ connection_id: string }>(server, 'POST', '/api/v1/operator/token', { code, code_verifier: verifier, redirect_uri: op.redirectUri }, op.basic);
  return expectStatus(exchanged, 200, 'code exchange').body.connection_id;
}

async function operatorAgent(op: Operator, connectionId: string, name: string): Promise<string> {
  const { publicJwk } = await generateAgentKeyPair();
  const made = await call<{ agent_id: string }>(server, 'POST', '/api/v1/operator/agents', { connection_id: connectionId, name, jwk: publicJwk }, op.basic);
  return expectStatus(made, 200, `operator agent ${name}`).body.agent_id;
}

/** The state an agent's line in the connection card shows. */
const stateIn = (card: Locator, agentId: string): Promise<string | null> => card.locator(`li[data-agent="${agentId}"] .agent-state`).textContent();

test('on a phone the person sees a connection and its agents, changes the agent limit and disconnects', { timeout: 180_000 }, async () => {
  const op = await activeOperator();
  tab = await openOwnerTab(browser, PHONE);
  const { page } = tab;
  await signUp(page, server.baseUrl, `connections.${Date.now()}@example.com`);
  await page.locator('#passkey-setup').waitFor({ state: 'visible' });
  await page.click('#passkey-setup-button');
  await page.locator('#passkey-setup').waitFor({ state: 'hidden' });
  const connectionId = await connect(page, op);
  const first = await operatorAgent(op, connectionId, 'mail sorter');
  const second = await operatorAgent(op, connectionId, 'shopper');

  // The connection under Agents: the operator's name and domain, its state, both agents, the limit.
  await page.goto(`${server.baseUrl}/app#agents`);
  await page.locator('section.view[data-view="agents"]').waitFor({ state: 'visible' });
  const card = page.locator(`#connections article[data-connection="${connectionId}"]`);
  await card.waitFor();
  assert.equal(await card.locator('h3').textContent(), OPERATOR);
  assert.equal(await card.locator('.connection-domain').textContent(), new URL(site.origin).host);
  assert.equal(await card.locator('.connection-status').textContent(), 'Connected');
  assert.equal(await card.locator('.connection-count').textContent(), '2 agents of at most 5');
  assert.equal(await stateIn(card, first), 'Active');
  assert.equal(await stateIn(card, second), 'Active');
  assert.equal(await card.locator('input.limit-input').inputValue(), '5');

  // Both agents in the list, marked as the operator's.
  for (const id of [first, second]) {
    const agent = page.locator(`#agents article[data-agent="${id}"]`);
    assert.equal(await agent.locator('.via').textContent(), `via ${OPERATOR}`);
    assert.match((await agent.locator('.agent-operator').textContent()) ?? '', new RegExp(`^${OPERATOR}, an operator you connected`));
  }
  await expectNoSidewaysScroll(page, 'Agents with a connection');
  await expectNoError(page);

  // A limit out of range is refused in the card, in words; nothing changes.
  await card.locator('input.limit-input').fill('51');
  await card.locator('button.limit-save').click();
  assert.equal(await card.locator('.card-error').textContent(), 'The agent limit is a whole number from 0 to 50.');
  assert.equal(await stateIn(card, second), 'Active');

  // Lower to 1: the newer agent is suspended, here and on its own card, which says why.
  await card.locator('input.limit-input').fill('1');
  await card.locator('button.limit-save').click();
  await page.locator('#message.ok', { hasText: `${OPERATOR} may now have up to 1 agent. 1 agent is suspended until you raise it.` }).waitFor();
  await card.locator(`li[data-agent="${second}"] .agent-state.suspended`).waitFor();
  assert.equal(await stateIn(card, first), 'Active');
  assert.equal(await card.locator('.connection-count').textContent(), '2 agents of at most 1; 1 suspended until you raise the limit');
  const suspended = page.locator(`#agents article[data-agent="${second}"]`);
  await suspended.locator('.flag.state.suspended').waitFor();
  assert.match((await suspended.locator('.agent-suspended').textContent()) ?? '', /^Suspended\. You lowered the agent limit for Acme agents .* raise the limit under Connections/);
  assert.equal(await page.locator(`#agents article[data-agent="${first}"] .agent-suspended`).count(), 0);
  await expectNoSidewaysScroll(page, 'a suspended agent');

  // "See the connection" on the agent's card brings the connection into view.
  await suspended.locator('button.see-connection').click();
  await page.waitForFunction((id) => document.activeElement?.getAttribute('data-connection') === id, connectionId);

  // Raise it back: both work again.
  await card.locator('input.limit-input').fill('5');
  await card.locator('button.limit-save').click();
  await page.locator('#message.ok', { hasText: `${OPERATOR} may now have up to 5 agents.` }).waitFor();
  await card.locator(`li[data-agent="${second}"] .agent-state.active`).waitFor();
  await page.locator(`#agents article[data-agent="${second}"] .agent-suspended`).waitFor({ state: 'detached' });

  // Disconnect asks first, saying what happens; Cancel changes nothing.
  await card.locator('button.disconnect').click();
  const question = (await card.locator('.confirm-question').textContent()) ?? '';
  assert.match(question, /^Disconnect Acme agents\? Its 2 agents \(mail sorter.*, shopper.*\) are removed and signed out of every site/);
  await expectNoSidewaysScroll(page, 'the disconnect question');
  await card.locator('button.confirm-no').click();
  assert.equal(await card.locator('.connection-status').textContent(), 'Connected');
  await card.locator('button.disconnect').click();
  await card.locator('button.confirm-yes').click();
  await page.locator('#message.ok', { hasText: `${OPERATOR} is disconnected` }).waitFor();

  // Both agents are gone from the list; the ended connection waits behind "Show ended".
  await page.locator(`#agents article[data-agent="${first}"]`).waitFor({ state: 'detached' });
  assert.equal(await page.locator(`#agents article[data-agent="${second}"]`).count(), 0);
  await card.waitFor({ state: 'detached' });
  assert.equal(await page.locator('#connections-empty').isVisible(), true);
  await page.click('#connections-show-ended');
  const ended = page.locator(`#connections-ended article[data-connection="${connectionId}"]`);
  await ended.waitFor();
  assert.equal(await ended.locator('.connection-status').textContent(), 'Ended');
  assert.equal(await stateIn(ended, first), 'Removed');
  assert.equal(await stateIn(ended, second), 'Removed');
  assert.equal(await ended.locator('button').count(), 0, 'an ended connection has no controls');
  await expectNoSidewaysScroll(page, 'an ended connection');
  await expectNoError(page);

  // What the service holds agrees: the connection ended, and the operator can add no agent to it.
  const cookie = await sessionCookie(tab.context, server.baseUrl);
  const held = expectStatus(await call<{ id: string; status: string; agents: { status: string }[] }[]>(server, 'GET', '/api/connections', undefined, { cookie }), 200, 'connections');
  const row = held.body.find((c) => c.id === connectionId);
  assert.equal(row?.status, 'removed');
  assert.deepEqual(row?.agents.map((a) => a.status), ['removed', 'removed']);
  const { publicJwk } = await generateAgentKeyPair();
  expectStatus(await call(server, 'POST', '/api/v1/operator/agents', { connection_id: connectionId, name: 'late', jwk: publicJwk }, op.basic), 403, 'no agent on an ended connection');

  // Activity tells the story in words.
  await goTo(page, 'activity');
  await page.locator('#activity li[data-action="operator.connection_ended"]', { hasText: 'You disconnected "Acme agents"' }).waitFor();
  assert.match((await page.locator('#activity li[data-action="operator.connection_ended"]').textContent()) ?? '', /2 agents removed and signed out of every site/);
  assert.equal(await page.locator('#activity li[data-action="operator.connection_limit"]').count(), 2);
  assert.match((await page.locator('#activity li[data-action="operator.connection_limit"]').nth(1).textContent()) ?? '', /agent limit to 1.*1 agent suspended/);
  assert.deepEqual(tab.problems, []);
});
