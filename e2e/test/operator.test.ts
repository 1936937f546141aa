import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { AgentRevokedError, MandateAgent } from '@mandate/agent';
import { createDpopProof } from '../../packages/protocol/src/index.ts';
import { launchChromium } from '../../packages/server/test/helpers/browser.ts';
import { verifyEmail } from '../../packages/server/test/helpers/email-over-http.ts';
import { HttpOwner, call, expectStatus } from '../../packages/server/test/helpers/over-http.ts';
import { freePort, startServer, type ServerProcess } from '../../packages/server/test/helpers/server-process.ts';
import { until } from '../../packages/server/test/helpers/until.ts';
import { type OwnerTab, expectNoError, goTo, openNotifications, openOwnerTab, requestCard, sessionCookie, signUp } from '../../packages/web/test/helpers/owner-app.ts';
import { type CliAnswer, ExampleOperator } from './helpers/example-operator.ts';
import { type Shop, startShop } from './helpers/shop.ts';

// docs/operators/quickstart.md, every part real: the Mandate service, the example operator
// (examples/operator: server.ts and cli.ts) and the demo shop in cloud and local mode as their own
// processes; a developer registers the operator over HTTP, the example serves the verification line,
// an admin switches it on; a person in Chromium (passkey in a virtual authenticator) follows the
// example's "Connect your Mandate account" link, consents with the passkey and lands on the
// example's callback, which exchanges the code; the example's CLI creates an agent; the agent (the
// SDK, with the private key the example kept) asks for access, the person approves with the
// passkey, both shops accept its pass. Then the person disconnects, and the agent is refused
// everywhere (both shops, the revocation list, the token endpoint, an OIDC sign-in); the operator
// ends a second connection itself; last, the example's callback refuses what it must.

const SITE = 'demo-shop.example';
const OPERATOR_NAME = 'Example operator';
const REV_TTL_SEC = 2;
const ADMIN = `admin.${process.pid}.${Date.now()}@example.com`;

type Created = { agent_id: string; name: string; browser: string; dir: string };
type ListedAgent = { agent_id: string; name: string; browser: string; connection_id: string; status: string; created_at: string };
type ListedConnection = { connection_id: string; sub: string; max_agents: number; status: string; created_at: string; agents: number };

describe('an operator, from registration to a disconnect, with the example operator', () => {
  let server: ServerProcess;
  let cloud: Shop;
  let local: Shop;
  let operator: ExampleOperator;
  let browser: Browser;
  let tab: OwnerTab;
  let page: Page;
  let cookie = '';
  let secret = '';
  let firstConnection = '';

  const logs = (r?: CliAnswer) => [
    ...(r ? [`--- cli\n${r.output}`] : []),
    `--- mandate\n${server?.logs() ?? ''}`,
    `--- example operator\n${operator?.process.output() ?? ''}`,
    ...[cloud, local].filter(Boolean).map((s) => `--- ${s.mode} shop\n${s.process.output()}`),
  ].join('\n');
  const cli = async (...args: string[]): Promise<unknown> => {
    const r = await operator.cli(...args);
    assert.equal(r.code, 0, logs(r));
    return r.json;
  };
  const owner = (method: string, path: string) => call(server, method, path, method === 'GET' ? undefined : {}, { cookie });

  before(async () => {
    browser = await launchChromium('operator quickstart');
    server = await startServer({ name: 'mandate', env: { OUTBOUND_ALLOW_LOOPBACK: 'true', ADMIN_EMAILS: ADMIN } });
    cloud = await startShop({ mode: 'cloud', mandateUrl: server.url, issuer: server.baseUrl, site: SITE });
    local = await startShop({ mode: 'local', mandateUrl: server.url, issuer: server.baseUrl, site: SITE, revTtlSec: REV_TTL_SEC, maxStaleSec: 40 }); // 40: see e2e/README.md

    // The developer registers the operator, its redirect URI on the example's address.
    const port = await freePort();
    const developer = await HttpOwner.signUp(server, server.baseUrl, { label: 'operator-dev' });
    const registered = await developer.ok<{ id: string; secret: string; status: string; verification: { url: string; line: string } }>('POST', '/api/operators', {
      name: OPERATOR_NAME, redirect_uris: [ExampleOperator.redirectUri(port)], browser: 'operator',
    });
    assert.equal(registered.status, 'pending');
    assert.equal(registered.verification.url, `http://127.0.0.1:${port}/.well-known/service-site.txt`);
    secret = registered.secret;

    // The example serves the line; Mandate fetches it; an admin switches the operator on.
    operator = await ExampleOperator.start({ port, mandateUrl: server.url, issuer: server.baseUrl, operatorId: registered.id, secret, verificationLine: registered.verification.line });
    const verified = await developer.ok<{ verified: boolean }>('POST', `/api/operators/${registered.id}/verify`);
    assert.equal(verified.verified, true);
    const admin = await HttpOwner.signUp(server, server.baseUrl, { email: ADMIN });
    await verifyEmail(server, admin.auth, ADMIN);
    const switched = await admin.ok<{ status: string }>('POST', `/api/admin/operators/${registered.id}/status`, { enabled: true });
    assert.equal(switched.status, 'active');

    // The person: signed up on a phone, the first passkey set up as the app offers it.
    tab = await openOwnerTab(browser);
    page = tab.page;
    await signUp(page, server.baseUrl, `person.${Date.now()}@example.com`);
    await page.locator('#passkey-setup').waitFor({ state: 'visible' });
    await page.click('#passkey-setup-button');
    await page.locator('#passkey-setup').waitFor({ state: 'hidden' });
    cookie = await sessionCookie(tab.context, server.baseUrl);
  });

  after(async () => {
    await tab?.context.close().catch(() => undefined);
    await browser?.close();
    for (const s of [cloud, local]) await s?.stop();
    await operator?.stop();
    await server?.stop();
  });

  /** The person follows the example's link, approves with the passkey, lands on its callback: the connection id it shows. */
  async function connect(): Promise<string> {
    await page.goto(operator.url);
    await page.click('#connect');
    await page.waitForURL((url) => url.href.startsWith(`${server.baseUrl}/connect?`), { timeout: 15_000 });
    const link = new URL(page.url());
    assert.equal(link.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(await page.locator('h1').textContent(), `Connect ${OPERATOR_NAME}?`);
    await page.waitForFunction(() => !(document.getElementById('cn-approve') as HTMLButtonElement).disabled);
    await page.click('#cn-approve');
    await page.waitForURL((url) => url.href.startsWith(`${operator.url}/callback`), { timeout: 20_000 });
    await page.locator('h1').waitFor();
    assert.equal(await page.locator('h1').textContent(), 'Connected', logs());
    const connectionId = (await page.locator('#connection').textContent()) ?? '';
    assert.match(connectionId, /^cn_[a-z2-7]{26}$/);
    assert.equal(await page.locator('#max-agents').textContent(), '5');
    return connectionId;
  }

  /** Back from the operator's pages to the owner app, on its requests. */
  async function openApp(): Promise<void> {
    await page.goto(`${server.baseUrl}/app`);
    await goTo(page, 'requests');
  }

  /** The pass and a fresh DPoP proof sent by the test itself: the shop's own answer, unretried. */
  async function shopAnswer(agent: MandateAgent, pass: string, shop: Shop): Promise<string> {
    const url = `${shop.url}/products`;
    const dpop = await createDpopProof(agent.key.privateKey, agent.key.publicJwk, { htm: 'GET', htu: url, accessToken: pass });
    const res = await fetch(url, { headers: { authorization: `Bearer ${pass}`, dpop } });
    const body = (await res.json()) as { error?: string };
    return body.error ? `${res.status} ${body.error}` : String(res.status);
  }

  /** An OIDC sign-in by the agent at a registered client: where /oidc/authorize answers. */
  async function oidcAuthorize(agent: MandateAgent, clientId: string, redirectUri: string): Promise<{ status: number; location: string; body: string }> {
    const verifier = randomBytes(32).toString('base64url');
    const authorize = new URL('/oidc/authorize', server.baseUrl);
    authorize.search = new URLSearchParams({
      client_id: clientId, redirect_uri: redirectUri, response_type: 'code', scope: 'openid', state: 'st',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256',
    }).toString();
    const res = await fetch(authorize, { redirect: 'manual', headers: await agent.signInHeaders(authorize) });
    return { status: res.status, location: res.headers.get('location') ?? '', body: await res.text() };
  }

  it('the person connects with the passkey, the example creates an agent, the person approves it and both shops accept it; after the person disconnects it is refused everywhere', { timeout: 120_000 }, async () => {
    firstConnection = await connect();
    assert.deepEqual(tab.problems, []);
    const connections = await cli('connections') as ListedConnection[];
    assert.deepEqual(connections.map((c) => [c.connection_id, c.status, c.max_agents]), [[firstConnection, 'active', 5]]);

    // The example makes the key pair and creates the agent: Mandate names it after the operator.
    const created = await cli('create-agent', firstConnection, 'Shopper') as Created;
    assert.match(created.agent_id, /^ag_/);
    assert.deepEqual([created.name, created.browser], [`Shopper (via ${OPERATOR_NAME})`, 'operator']);
    const listed = await cli('agents', firstConnection) as ListedAgent[];
    assert.deepEqual(listed.map((a) => [a.agent_id, a.status, a.connection_id]), [[created.agent_id, 'active', firstConnection]]);

    // The person is told, in the app's inbox.
    await openApp();
    await openNotifications(page);
    const added = page.locator('#inbox li[data-type="agent_added"]');
    await until('the agent_added notice', async () => ((await added.count()) >= 1 ? true : undefined), { ms: 15_000 });
    assert.match((await added.first().textContent()) ?? '', /Shopper \(via Example operator\)/);

    // The agent runs with the private key the example kept (a mandate-agent key directory).
    const agent = MandateAgent.fromDirectory(created.dir);
    assert.equal(agent.agentId, created.agent_id);
    const asked = await agent.requestAccess({ site: SITE, scopes: ['list'] });
    await goTo(page, 'requests');
    const card = await requestCard(page, asked.txnId);
    assert.match((await card.textContent()) ?? '', /Shopper \(via Example operator\)/);
    await card.locator('button.approve').click();
    await card.locator('.outcome.ok').waitFor({ timeout: 15_000 });
    await expectNoError(page);
    await agent.waitForApproval(asked.txnId, { intervalMs: 200, timeoutMs: 15_000 });
    for (const shop of [cloud, local]) {
      const res = await agent.fetch(`${shop.url}/products`, {}, { site: SITE });
      const body = await res.text();
      assert.equal(res.status, 200, `${shop.mode} shop\n${body}\n${logs()}`);
    }
    const pass = (await agent.pass(SITE)).accessToken;

    // An OIDC client (registered by the person, as any site owner would): the agent's sign-in reaches the owner (the wait page) while connected.
    const rp = `${cloud.url}/oidc/callback`;
    const oidcClient = await call<{ client_id: string }>(server, 'POST', '/api/oidc/clients', { name: 'Shop sign-in', redirect_uris: [rp] }, { cookie });
    expectStatus(oidcClient, 200, 'OIDC client');
    const before = await oidcAuthorize(agent, oidcClient.body.client_id, rp);
    assert.equal(before.status, 302);
    assert.match(before.location, /\/oidc\/authorize\/wait\//);

    // The person disconnects the operator (the owner API, with the app's session).
    const own = expectStatus(await owner('GET', '/api/connections'), 200, 'the person lists connections').body as unknown as { id: string; status: string; operator: { name: string } }[];
    assert.deepEqual(own.map((c) => [c.id, c.status, c.operator.name]), [[firstConnection, 'active', OPERATOR_NAME]]);
    expectStatus(await owner('POST', `/api/connections/${firstConnection}/disconnect`), 200, 'disconnect');

    // Refused everywhere: cloud verify at once, the signed revocation list, the local shop within its poll, the token endpoint, OIDC.
    assert.equal(await shopAnswer(agent, pass, cloud), '401 agent_revoked', logs());
    const snapshot = expectStatus(await call<{ revoked_agents: { id: string }[] }>(server, 'GET', '/api/v1/revocation'), 200, 'revocation list');
    assert.ok(snapshot.body.revoked_agents.some((a) => a.id === created.agent_id), 'the agent is on the signed revocation list');
    let last = '';
    await until('the local shop to refuse the pass', async () => {
      last = await shopAnswer(agent, pass, local);
      return last === '200' ? undefined : last;
    }, { ms: (REV_TTL_SEC + 8) * 1000, everyMs: 200, describe: () => `last ${last}\n${logs()}` });
    assert.equal(last, '401 agent_revoked');
    const token = await call<{ detail?: string }>(server, 'POST', '/api/v1/token', { agent_id: created.agent_id, site: SITE, agent_jwt: await agent.agentJwt() });
    assert.equal(token.status, 403, JSON.stringify(token.body));
    assert.match(String(token.body.detail), /agent revoked/);
    await assert.rejects(agent.fetch(`${cloud.url}/products`, {}, { site: SITE }), AgentRevokedError);
    const afterwards = await oidcAuthorize(agent, oidcClient.body.client_id, rp);
    assert.equal(afterwards.status, 403, `OIDC sign-in after the disconnect: ${afterwards.status} ${afterwards.location} ${afterwards.body}`);
    assert.match(afterwards.body, /agent revoked/);

    // The operator sees it ended, and can add no agent to it.
    const ended = await cli('connections') as ListedConnection[];
    assert.notEqual(ended.find((c) => c.connection_id === firstConnection)?.status, 'active');
    const agentsNow = await cli('agents', firstConnection) as ListedAgent[];
    assert.notEqual(agentsNow.find((a) => a.agent_id === created.agent_id)?.status, 'active');
    const refused = await operator.cli('create-agent', firstConnection, 'Another');
    assert.equal(refused.code, 1, logs(refused));
    assert.match(refused.output, /403/);
  });

  it('connecting again makes a new connection; the operator ends it, and its agent gets no pass', { timeout: 60_000 }, async () => {
    const second = await connect();
    assert.notEqual(second, firstConnection, 'an ended connection stays ended');
    const created = await cli('create-agent', second, 'Helper') as Created;
    const agent = MandateAgent.fromDirectory(created.dir);
    const asked = await agent.requestAccess({ site: SITE, scopes: ['list'] });
    await openApp();
    const card = await requestCard(page, asked.txnId);
    await card.locator('button.approve').click();
    await card.locator('.outcome.ok').waitFor({ timeout: 15_000 });
    await agent.waitForApproval(asked.txnId, { intervalMs: 200, timeoutMs: 15_000 });
    const pass = (await agent.pass(SITE)).accessToken;
    assert.equal(await shopAnswer(agent, pass, cloud), '200', logs());

    await cli('end-connection', second);
    assert.equal(await shopAnswer(agent, pass, cloud), '401 agent_revoked', logs());
    await assert.rejects(agent.pass(SITE, { force: true }), AgentRevokedError);
    const own = expectStatus(await owner('GET', '/api/connections'), 200, 'the person lists connections').body as unknown as { id: string; status: string }[];
    assert.notEqual(own.find((c) => c.id === second)?.status, 'active', 'the person sees it ended');

    // The secret never reached the example's output.
    assert.ok(!operator.process.output().includes(secret), 'the operator secret is not logged');
  });
  it('the example\'s own checks: it serves the line; its callback refuses an unknown state, another browser, another issuer, and says so on a decline', { timeout: 30_000 }, async () => {
    const file = await fetch(`${operator.url}/.well-known/service-site.txt`);
    assert.match(await file.text(), /^mandate-operator=op_[a-z2-7]{26}:\S+\n$/);

    /** A new attempt as a browser starts it: the /connect address and the cookie set with it. */
    const start = async (): Promise<{ state: string; cookie: string; link: URL }> => {
      const res = await fetch(`${operator.url}/connect/start`, { redirect: 'manual' });
      assert.equal(res.status, 302);
      const link = new URL(res.headers.get('location') ?? '');
      assert.equal(`${link.origin}${link.pathname}`, `${server.baseUrl}/connect`);
      assert.deepEqual([...link.searchParams.keys()].sort(), ['code_challenge', 'code_challenge_method', 'operator', 'redirect_uri', 'state']);
      return { state: link.searchParams.get('state') ?? '', cookie: (res.headers.get('set-cookie') ?? '').split(';')[0] ?? '', link };
    };
    const back = async (query: Record<string, string>, cookie = ''): Promise<{ status: number; text: string }> => {
      const res = await fetch(`${operator.url}/callback?${new URLSearchParams(query)}`, { headers: cookie ? { cookie } : {} });
      return { status: res.status, text: await res.text() };
    };

    const a = await start();
    const b = await start();
    assert.notEqual(a.state, b.state);
    assert.notEqual(a.link.searchParams.get('code_challenge'), b.link.searchParams.get('code_challenge'), 'a fresh verifier each time');
    const unknown = await back({ code: 'x', state: 'made-up', iss: server.baseUrl }, a.cookie);
    assert.deepEqual([unknown.status, /unknown or expired/.test(unknown.text)], [400, true]);
    const otherBrowser = await back({ code: 'x', state: a.state, iss: server.baseUrl });
    assert.deepEqual([otherBrowser.status, /another browser/.test(otherBrowser.text)], [400, true]);
    const reused = await back({ code: 'x', state: a.state, iss: server.baseUrl }, a.cookie);
    assert.equal(reused.status, 400, 'a state works once, whatever the outcome');
    const mixUp = await back({ code: 'x', state: b.state, iss: 'https://elsewhere.example' }, b.cookie);
    assert.deepEqual([mixUp.status, /does not come from/.test(mixUp.text)], [400, true]);
    const c = await start();
    const declined = await back({ error: 'access_denied', state: c.state, iss: server.baseUrl }, c.cookie);
    assert.deepEqual([declined.status, /did not connect/.test(declined.text)], [200, true]);
  });
});
