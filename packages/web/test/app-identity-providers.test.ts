import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../../server/test/helpers/browser.ts';
import { startServer, type ServerProcess } from '../../server/test/helpers/server-process.ts';
import { call, expectStatus, remoteAccessRequest, remoteAgent, type RemoteOwner } from '../../server/test/helpers/over-http.ts';
import { startIdentityProviderStandIn, type IdentityProviderStandIn } from '../../server/test/helpers/stand-ins/identity-provider.ts';
import { PHONE, type OwnerTab, expectNoError, expectNoSidewaysScroll, goTo, openOwnerTab, requestCard, screenshot, sessionCookie, signUp } from './helpers/owner-app.ts';

// Identity providers in the owner app (decisions §15), in Chromium on a phone-sized screen, against
// the service as its own process and two real OpenID Providers on loopback (stand-ins for Google
// and Microsoft): link Google under Account, sign out, sign in with Google, and approve an access
// request with "Approve with Google" (the provider asks for a fresh sign-in and sends the browser back).

let server: ServerProcess;
let browser: Browser;
let google: IdentityProviderStandIn;
let microsoft: IdentityProviderStandIn;
let tab: OwnerTab;
const email = `idp.${Date.now()}@example.com`;

before(async () => {
  google = await startIdentityProviderStandIn();
  microsoft = await startIdentityProviderStandIn();
  browser = await launchChromium('owner app with identity providers');
  server = await startServer({
    env: { DATABASE_URL: '', OUTBOUND_ALLOW_LOOPBACK: 'true', OAUTH_PROVIDERS: 'google,microsoft', ...google.env('google'), ...microsoft.env('microsoft', 'Microsoft') },
  });
  // The service's port is known only now: register its callbacks at the providers.
  google.allowRedirectUris([`${server.baseUrl}/api/oauth/google/callback`]);
  microsoft.allowRedirectUris([`${server.baseUrl}/api/oauth/microsoft/callback`]);
});

after(async () => {
  await browser?.close();
  await server?.stop();
  await google?.stop();
  await microsoft?.stop();
});

const message = (tab: OwnerTab, text: string) => tab.page.locator('#message', { hasText: text }).waitFor({ timeout: 15_000 });

test('link Google in Account, sign out, sign in with Google, approve an access request with "Approve with Google"', { timeout: 120_000 }, async () => {
  tab = await openOwnerTab(browser, PHONE);
  const { page } = tab;
  await signUp(page, server.baseUrl, email);

  // Account lists both providers, neither linked; Link goes to the provider and back.
  const account = await goTo(page, 'account');
  await account.locator('#idp-card').waitFor({ state: 'visible' });
  const googleRow = page.locator('#idp-list li[data-provider="google"]');
  assert.equal(await googleRow.locator('.idp-state').textContent(), 'Not linked');
  assert.equal(await page.locator('#idp-list li[data-provider="microsoft"] .idp-state').textContent(), 'Not linked');
  await expectNoSidewaysScroll(page, 'Account with sign-in providers');
  google.signInAs({ sub: 'phone-owner', email });
  await googleRow.locator('button.idp-link').click();
  await message(tab, 'Google is linked');
  await page.locator('#view-account').waitFor({ state: 'visible' });
  await googleRow.locator('.idp-state', { hasText: 'Linked' }).waitFor();
  assert.equal(await googleRow.locator('button.idp-unlink').isVisible(), true, 'a linked provider offers Unlink');
  assert.equal(new URL(page.url()).hash, '#account', 'the outcome was taken out of the address');
  await page.locator('#idp-card').scrollIntoViewIfNeeded();
  await screenshot(page, 'identity-providers-account');
  await expectNoError(page);

  // Signed out, the sign-in page offers both providers; Google signs this owner in.
  await page.click('#signout');
  await page.locator('#signed-out').waitFor({ state: 'visible' });
  const signInButton = page.locator('#idp-signin-buttons button[data-provider="google"]');
  await signInButton.waitFor({ state: 'visible' });
  assert.equal(await signInButton.textContent(), 'Sign in with Google');
  assert.equal(await page.locator('#idp-signin-buttons button[data-provider="microsoft"]').textContent(), 'Sign in with Microsoft');
  await expectNoSidewaysScroll(page, 'sign-in page with providers');
  await page.locator('#idp-signin').scrollIntoViewIfNeeded();
  await screenshot(page, 'identity-providers-sign-in');
  // A Microsoft account nobody linked: refused in the app's own words, still signed out, no account made.
  microsoft.signInAs({ sub: 'someone-else', email });
  await page.locator('#idp-signin-buttons button[data-provider="microsoft"]').click();
  await message(tab, 'This Microsoft account is not linked to a Mandate account');
  assert.equal(await page.locator('#signed-out').isVisible(), true);
  await signInButton.click();
  await page.locator('#signed-in').waitFor({ state: 'visible', timeout: 15_000 });
  await message(tab, 'Signed in with Google');
  const cookie = await sessionCookie(tab.context, server.baseUrl);
  const me = await call<{ email: string; session_method: string }>(server, 'GET', '/api/me', undefined, { cookie });
  assert.deepEqual([me.body.email, me.body.session_method], [email, 'oauth']);

  // An agent asks for access; the card offers "Approve with Google" (only linked providers).
  const owner = { auth: { cookie } } as unknown as RemoteOwner;
  const agent = await remoteAgent(server, owner, 'shopper');
  const txn = expectStatus(await remoteAccessRequest(server, agent, 'shop.example'), 200, 'access request').body.txn_id;
  const card = await requestCard(page, txn);
  const viaGoogle = card.locator('button.idp-approve-button[data-provider="google"]');
  await viaGoogle.waitFor({ state: 'visible' });
  assert.equal(await viaGoogle.textContent(), 'Approve with Google');
  assert.equal(await card.locator('button.idp-approve-button[data-provider="microsoft"]').count(), 0, 'Microsoft is not linked');
  await expectNoSidewaysScroll(page, 'a request card with Approve with Google');
  await viaGoogle.scrollIntoViewIfNeeded();
  await screenshot(page, 'identity-providers-approve');
  const asked = google.authorizations.length;
  await viaGoogle.click();
  await message(tab, 'Approved with Google');
  assert.equal(new URL(page.url()).hash, '#requests', 'the answered request is not looked for (its card would be reported gone)');
  const fresh = google.authorizations.slice(asked).at(-1);
  assert.deepEqual([fresh?.get('max_age'), fresh?.get('prompt')], ['0', 'login'], 'the provider was asked for a fresh sign-in');
  const after = await call<{ grants: { site: string; agent_id: string }[]; pending: { id: string }[] }>(server, 'GET', '/api/me', undefined, { cookie });
  assert.ok(after.body.grants.some((g) => g.site === 'shop.example' && g.agent_id === agent.id), 'the grant exists');
  assert.equal(after.body.pending.some((p) => p.id === txn), false, 'nothing waits any more');
  assert.deepEqual(google.rejections, [], 'every request the provider got passed its checks');
  assert.deepEqual(tab.problems, []);
});
