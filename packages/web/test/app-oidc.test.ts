import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAgentJwt } from '@mandate/protocol';
import type { Browser, Locator } from 'playwright-core';
import { launchChromium } from '../../server/test/helpers/browser.ts';
import { startServer, type ServerProcess } from '../../server/test/helpers/server-process.ts';
import { call, expectStatus } from '../../server/test/helpers/over-http.ts';
import { until } from '../../server/test/helpers/until.ts';
import { type AgentKey, agentKey } from './helpers/agent-runner.ts';
import { verifyEmail } from '../../server/test/helpers/email-over-http.ts';
import {
  type OwnerTab, createAgent, expectNoError, expectNoSidewaysScroll, goTo, openOwnerTab, requestCard, screenshot, sessionCookie, signUp,
} from './helpers/owner-app.ts';

// OIDC sign-ins in the owner app, on a 360 px phone, against the service as its own process: an
// agent signs in at a site (a confidential OIDC client whose redirect URI is a tiny HTTP server on
// 127.0.0.1, loopback being allowed for tests); the owner sees a card that reads as a sign-in (with
// "unverified site" while the site has not proved it runs that address), approves it with the
// passkey; the site redeems the code, and the grant in Access shows the sign-in; revoking it says
// it signs the agent out, and does (the refresh token dies, the site gets a back-channel logout).
// Then the site asks by CIBA with a binding message holding markup, which the card shows as text.
// The tests run in order and build on each other.

const PHONE_360 = { width: 360, height: 740 } as const;
const CLIENT_NAME = 'Example Shop';
const BINDING = 'Order #42 <b>"total"</b>';

let server: ServerProcess;
let browser: Browser;
let key: AgentKey;
let phone: OwnerTab;
let cookie = '';
let agentId = '';
const ownerEmail = `oidc.${Date.now()}@example.com`;
/** The relying party: serves the verification file and takes back-channel logouts. */
let site: Server;
let siteUrl = '';
let siteHost = '';
let siteFile: string | null = null;
const logoutTokens: string[] = [];
let client = { id: '', secret: '', redirectUri: '' };
/** What the first sign-in's ID token said. */
let first: { sub: string; actSub: string; sid: string; refresh: string } = { sub: '', actSub: '', sid: '', refresh: '' };

before(async () => {
  site = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/.well-known/service-site.txt' && siteFile !== null) {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(siteFile);
      return;
    }
    if (req.method === 'POST' && req.url === '/logout') {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        const token = new URLSearchParams(body).get('logout_token');
        if (token) logoutTokens.push(token);
        res.writeHead(200).end();
      });
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteHost = `127.0.0.1:${(site.address() as AddressInfo).port}`;
  siteUrl = `http://${siteHost}`;
  [browser, server, key] = await Promise.all([
    launchChromium('OIDC sign-ins in the owner app'),
    startServer({ env: { DATABASE_URL: '', OUTBOUND_ALLOW_LOOPBACK: 'true', OUTBOX_POLL_MS: '200' } }),
    agentKey(),
  ]);
});

after(async () => {
  await browser?.close();
  await server?.stop();
  key?.remove();
  await new Promise((resolve) => site?.close(resolve));
});

const claimsOf = (jwt: string): Record<string, unknown> => JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
const basic = (): string => `Basic ${Buffer.from(`${encodeURIComponent(client.id)}:${encodeURIComponent(client.secret)}`).toString('base64')}`;

interface TokenAnswer {
  access_token?: string;
  refresh_token?: string;
  id_token?: string;
  error?: string;
}

/** A form POST to the provider as the site (client_secret_basic). */
async function sitePost(path: string, form: Record<string, string>): Promise<{ status: number; body: TokenAnswer & Record<string, unknown> }> {
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic() },
    body: new URLSearchParams(form).toString(),
  });
  return { status: res.status, body: (await res.json()) as TokenAnswer & Record<string, unknown> };
}

/**
 * The agent's authorize call, as the site built it (code flow, PKCE S256), with the agent header:
 * htu is the URL exactly as requested, at the service's public address. Answers where it was sent.
 */
async function authorize(scope: string): Promise<{ location: URL; verifier: string }> {
  const verifier = randomBytes(32).toString('base64url');
  const query = new URLSearchParams({
    client_id: client.id, redirect_uri: client.redirectUri, response_type: 'code', scope, state: randomBytes(8).toString('hex'),
    code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256',
  });
  const path = `/oidc/authorize?${query.toString()}`;
  const header = await createAgentJwt(key.privateKey, agentId, { jti: randomBytes(12).toString('base64url'), htu: `${server.baseUrl}${path}`, lifetimeSec: 60 });
  const res = await fetch(`${server.url}${path}`, { redirect: 'manual', headers: { 'x-service-agent': header } });
  assert.equal(res.status, 302, await res.text());
  return { location: new URL(res.headers.get('location') ?? '', server.baseUrl), verifier };
}

/** The site redeems the code from the redirect at /oidc/token. */
async function redeem(redirect: URL, verifier: string): Promise<TokenAnswer> {
  const code = redirect.searchParams.get('code');
  assert.ok(code, `a code in ${redirect.href}`);
  const answer = await sitePost('/oidc/token', { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: verifier });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body;
}

/** Scrolls so that `what` is in the middle of the screen (for the screenshot). */
const centre = (what: Locator): Promise<void> => what.evaluate((n) => n.scrollIntoView({ block: 'center' }));

const grantCard = (): Locator => phone.page.locator('#grants article', { hasText: siteHost });

test('the owner signs up on a 360 px phone with a passkey and an agent; a site registers as a confidential OIDC client', { timeout: 90_000 }, async () => {
  phone = await openOwnerTab(browser, PHONE_360);
  const { page, context } = phone;
  await signUp(page, server.baseUrl, ownerEmail, 'Robin Example');
  await page.click('#passkey-setup-button');
  await page.locator('#passkey-setup').waitFor({ state: 'hidden' });
  await expectNoError(page);
  agentId = await createAgent(page, 'shopper', key.publicJwk);
  cookie = await sessionCookie(context, server.baseUrl);
  // The sign-ins below ask for the `email` scope, requestable only once the address is verified (decisions §25).
  await verifyEmail(server, cookie, ownerEmail);

  const redirectUri = `${siteUrl}/cb`;
  const created = await call<{ client_id: string; client_secret: string }>(server, 'POST', '/api/oidc/clients',
    { name: CLIENT_NAME, redirect_uris: [redirectUri], backchannel_logout_uri: `${siteUrl}/logout` }, { cookie, origin: server.baseUrl });
  expectStatus(created, 200, 'client registration');
  client = { id: created.body.client_id, secret: created.body.client_secret, redirectUri };
  assert.match(client.id, /^c_/);
});

test('the agent signs in at the site: the card reads as a sign-in to that site, says "unverified site", and is approved with the passkey', { timeout: 90_000 }, async () => {
  const { page } = phone;
  const started = await authorize('openid profile email');
  const txn = /^\/oidc\/authorize\/wait\/(t_[a-z2-7]+)$/.exec(started.location.pathname)?.[1];
  assert.ok(txn, `sent to the wait address: ${started.location.href}`);

  await goTo(page, 'requests');
  const card = await requestCard(page, txn);
  assert.equal(await card.locator('h3').textContent(), `shopper wants to sign in to ${CLIENT_NAME} (${siteHost})`);
  assert.equal(await card.locator('.kind').textContent(), 'Sign-in');
  assert.equal(await card.getAttribute('aria-label'), `Sign-in: shopper to ${CLIENT_NAME} at ${siteHost}`);
  const warning = card.locator('.site-check.unverified');
  assert.equal(await warning.isVisible(), true, 'an unverified site says so');
  assert.match((await warning.textContent()) ?? '', new RegExp(`^Unverified site\\. ${CLIENT_NAME} has not proved that it runs ${siteHost.replace(/\./g, '\\.')}\\.`));
  assert.equal(await card.locator('figure.binding').count(), 0, 'no message from the site in this flow');
  const shares = (await card.locator('.shares').textContent()) ?? '';
  assert.match(shares, /that it is your agent/);
  assert.match(shares, /its name, as your agent/);
  // The OIDC scopes are not choices (unticking openid would break the sign-in); the email is.
  assert.equal(await card.locator('input[data-kind="scope"]').count(), 0);
  assert.equal(await card.getByRole('checkbox', { name: /user:email/ }).isChecked(), true);
  assert.equal(await card.locator('.limit-uses').count(), 0, 'a sign-in issues no passes to count');
  await expectNoSidewaysScroll(page, 'the sign-in card at 360 px');
  await centre(warning);
  await screenshot(page, 'oidc-sign-in-card');

  await card.getByRole('button', { name: 'Approve' }).click();
  await card.locator('.outcome.ok').waitFor();
  assert.equal(await card.locator('.outcome').textContent(), `Approved. shopper may sign in to ${CLIENT_NAME} (${siteHost}), which will see your email address.`);
  await expectNoError(page);

  // The wait address now sends the agent back to the site with a code; the site redeems it.
  const status = await until('the redirect with the code', async () => {
    const r = await call<{ status?: string; redirect?: string }>(server, 'GET', `${started.location.pathname}/status${started.location.search}`);
    return r.body.redirect;
  }, { ms: 15_000, everyMs: 200 });
  const tokens = await redeem(new URL(status), started.verifier);
  const claims = claimsOf(tokens.id_token ?? '');
  assert.deepEqual(claims.amr, ['agent', 'passkey']);
  assert.equal(claims.email, ownerEmail, 'the email the owner left ticked');
  const act = claims.act as { sub: string; name: string };
  assert.equal(act.name, 'shopper');
  first = { sub: String(claims.sub), actSub: act.sub, sid: String(claims.sid), refresh: tokens.refresh_token ?? '' };
  assert.ok(first.refresh, 'a refresh token');
});

test('Access: the grant for the site shows "Signed in at <site> since …"; a second sign-in (at once, under the grant) counts as a second session', { timeout: 60_000 }, async () => {
  const { page } = phone;
  await goTo(page, 'access');
  const grant = grantCard();
  await grant.locator('ul.sign-ins').waitFor({ timeout: 15_000 });
  const line = (await grant.locator('ul.sign-ins li').first().textContent()) ?? '';
  assert.match(line, new RegExp(`^Signed in at ${CLIENT_NAME} since \\S`));
  assert.doesNotMatch(line, /sessions/);

  const again = await authorize('openid profile');
  assert.equal(`${again.location.origin}${again.location.pathname}`, client.redirectUri, 'a live grant answers with a code at once');
  const second = claimsOf((await redeem(again.location, again.verifier)).id_token ?? '');
  assert.equal(second.sub, first.sub, 'the same person at the same site');
  assert.equal((second.act as { sub: string }).sub, first.actSub, 'the same agent at the same site');
  await grant.locator('ul.sign-ins li', { hasText: '(2 sessions)' }).waitFor({ timeout: 15_000 });
  assert.equal(await grant.locator('ul.sign-ins li').count(), 1, 'one line per site');
  await expectNoSidewaysScroll(page, 'the grant with its sign-ins at 360 px');
  await centre(grant);
  await screenshot(page, 'oidc-grant-sign-ins');
});

test('revoking the grant asks first, saying it signs the agent out of the site; then the sign-ins end (refresh refused, back-channel logout)', { timeout: 60_000 }, async () => {
  const { page } = phone;
  const grant = grantCard();
  await grant.getByRole('button', { name: `Revoke shopper at ${siteHost}` }).click();
  const question = (await grant.locator('.confirm-question').textContent()) ?? '';
  assert.equal(question, `Revoke shopper's access to ${siteHost}? The site refuses it at once if it checks with Mandate; if it checks passes itself, within a second while connected to Mandate's revocation stream, within a minute otherwise, and shopper is signed out of ${CLIENT_NAME}.`);
  await expectNoSidewaysScroll(page, 'the revoke question at 360 px');
  await centre(grant);
  await screenshot(page, 'oidc-revoke-confirm');
  await grant.getByRole('button', { name: 'Revoke and sign out' }).click();
  await grant.waitFor({ state: 'detached', timeout: 15_000 });
  await page.locator('#message.ok', { hasText: `signed out of ${CLIENT_NAME}` }).waitFor();
  assert.equal(await page.locator('#grants ul.sign-ins').count(), 0, 'no sign-in is shown any more');
  await expectNoError(page);

  const refreshed = await sitePost('/oidc/token', { grant_type: 'refresh_token', refresh_token: first.refresh });
  assert.equal(refreshed.body.error, 'invalid_grant', 'the sign-in\'s refresh token is dead');
  const logout = await until('the back-channel logout of the first sign-in', () =>
    logoutTokens.map(claimsOf).find((c) => c.sid === first.sid), { ms: 20_000, everyMs: 100 });
  assert.equal(logout.sub, first.sub);
  assert.equal(logout.aud, client.id);
});

test('CIBA: the site asks with a binding message holding markup and quotes; the (now verified) site\'s card shows it verbatim, as text, in its own box', { timeout: 90_000 }, async () => {
  const { page } = phone;
  // The site proves it runs the address: the card then says "verified".
  const listed = await call<{ client_id: string; verification: { line: string } }[]>(server, 'GET', '/api/oidc/clients', undefined, { cookie });
  siteFile = `${listed.body.find((c) => c.client_id === client.id)?.verification.line ?? ''}\n`;
  expectStatus(await call(server, 'POST', `/api/oidc/clients/${client.id}/verify`, undefined, { cookie, origin: server.baseUrl }), 200, 'verify');

  // The grant was revoked above, which also made the service forget the agent's subject at the site:
  // CIBA reaches only an agent that signed in at this client under a live grant. It signs in again.
  const refused = await sitePost('/oidc/bc-authorize', { scope: 'openid', login_hint: first.actSub, binding_message: BINDING });
  assert.equal(refused.body.error, 'unknown_user_id', 'after the revocation the site cannot ask by CIBA');
  const again = await authorize('openid');
  const txn = /^\/oidc\/authorize\/wait\/(t_[a-z2-7]+)$/.exec(again.location.pathname)?.[1];
  assert.ok(txn, `sent to the wait address: ${again.location.href}`);
  await goTo(page, 'requests');
  const signIn = await requestCard(page, txn);
  await signIn.getByRole('button', { name: 'Approve' }).click();
  await signIn.locator('.outcome.ok').waitFor();
  const redirect = await until('the redirect with the code', async () => {
    const r = await call<{ redirect?: string }>(server, 'GET', `${again.location.pathname}/status${again.location.search}`);
    return r.body.redirect;
  }, { ms: 15_000, everyMs: 200 });
  const actSub = (claimsOf((await redeem(new URL(redirect), again.verifier)).id_token ?? '').act as { sub: string }).sub;
  assert.equal(actSub, first.actSub, 'the same pairwise subject at the same site');

  const asked = await sitePost('/oidc/bc-authorize', { scope: 'openid', login_hint: actSub, binding_message: BINDING });
  assert.equal(asked.status, 200, JSON.stringify(asked.body));
  assert.ok(asked.body.auth_req_id, JSON.stringify(asked.body));

  const me = await until('the CIBA request in GET /api/me', async () => {
    const r = await call<{ pending: { id: string; sign_in?: { flow: string } }[] }>(server, 'GET', '/api/me', undefined, { cookie });
    return r.body.pending.find((p) => p.sign_in?.flow === 'ciba');
  }, { ms: 15_000, everyMs: 200 });
  await goTo(page, 'requests');
  const card = await requestCard(page, me.id);
  assert.equal(await card.locator('h3').textContent(), `shopper wants to sign in to ${CLIENT_NAME} (${siteHost})`);
  assert.equal(await card.locator('.kind').textContent(), 'Sign-in asked by the site');
  const box = card.getByRole('figure', { name: 'The site says' });
  assert.equal(await box.locator('figcaption').textContent(), 'The site says:');
  const message = box.locator('blockquote.binding-message');
  assert.equal(await message.textContent(), BINDING, 'the message exactly as the site wrote it');
  assert.equal(await message.locator('*').count(), 0, 'the markup is text, not elements');
  assert.equal(await card.locator('.site-check.unverified').count(), 0, 'a verified site gets no warning');
  assert.equal(await card.locator('.site-check.verified').textContent(), `Verified: ${CLIENT_NAME} proved it runs ${siteHost}.`);
  await expectNoSidewaysScroll(page, 'the CIBA card at 360 px');
  await centre(box);
  await screenshot(page, 'oidc-ciba-card');

  // Denied: the site's poll learns it.
  await card.getByRole('button', { name: 'Deny' }).click();
  await card.locator('.outcome.denied').waitFor();
  assert.equal(await card.locator('.outcome').textContent(), `Denied. shopper is not signed in to ${CLIENT_NAME} (${siteHost}).`);
  const polled = await sitePost('/oidc/token', { grant_type: 'urn:openid:params:grant-type:ciba', auth_req_id: String(asked.body.auth_req_id) });
  assert.equal(polled.body.error, 'access_denied', JSON.stringify(polled.body));
});

test('everything fit a 360 px phone; no script errors, CSP violations or server errors', { timeout: 30_000 }, async () => {
  await expectNoSidewaysScroll(phone.page, 'the app at 360 px');
  assert.deepEqual(phone.problems, []);
  await phone.context.close();
});
