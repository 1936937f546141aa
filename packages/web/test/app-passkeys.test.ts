import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { createAgentJwt, jwkThumbprint } from '@mandate/protocol';
import { launchChromium } from '../../server/test/helpers/browser.ts';
import { startServer, type ServerProcess } from '../../server/test/helpers/server-process.ts';
import { agentKey } from './helpers/agent-runner.ts';
import { call, expectStatus } from '../../server/test/helpers/over-http.ts';
import {
  addPasskey, createAgent, expectNoError, expectSignedIn, goTo, openOwnerTab, requestCard, sessionCookie, signUp, type OwnerTab,
} from './helpers/owner-app.ts';

// Signing up, passkeys and signing in, in Chromium with a virtual WebAuthn authenticator standing in
// for the phone's passkey; the service runs as its own process.

let server: ServerProcess;
let browser: Browser;

before(async () => {
  browser = await launchChromium('passkey');
  server = await startServer({ env: { DATABASE_URL: '' } });
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

/**
 * Runs `steps` for a person who has just signed up (as `emailPrefix.<now>@example.com`) in a fresh
 * owner tab, then checks that the tab saw no script errors, CSP violations or server errors.
 */
async function asNewOwner(emailPrefix: string, steps: (tab: OwnerTab, email: string) => Promise<void>, name?: string): Promise<void> {
  const tab = await openOwnerTab(browser);
  const email = `${emailPrefix}.${Date.now()}@example.com`;
  await signUp(tab.page, server.baseUrl, email, name);
  await steps(tab, email);
  assert.deepEqual(tab.problems, [], 'no script errors or CSP violations');
  await tab.context.close();
}

/** Signs out, then submits the password sign-in form; the caller checks the outcome. */
async function signOutAndInWithPassword(page: Page, email: string, password: string): Promise<void> {
  await page.click('#signout');
  await page.locator('#signed-out').waitFor({ state: 'visible' });
  await page.fill('#signin-email', email);
  await page.fill('#signin-password', password);
  await page.click('#signin-password-button');
}

test('a person signs up, adds a passkey, signs out, signs in with the passkey alone and with the password', { timeout: 120_000 }, async () => {
  await asNewOwner('passkeys', async ({ page, cdp, authenticatorId, context }, email) => {
    await expectNoError(page);

    await addPasskey(page, 'Test phone');
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    assert.equal(credentials.length, 1);
    assert.equal(credentials[0]?.isResidentCredential, true, 'the passkey is discoverable');
    assert.equal(credentials[0]?.rpId, 'localhost');

    // Sign out, then back in with the passkey alone.
    await page.click('#signout');
    await page.locator('#signed-out').waitFor({ state: 'visible' });
    assert.equal(await page.locator('#tabs').isVisible(), false, 'no sections while signed out');
    await page.fill('#signin-email', email);
    await page.click('#signin-passkey-button');
    await expectSignedIn(page, email);
    await expectNoError(page);
    const signed = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    assert.ok((signed.credentials[0]?.signCount ?? 0) >= 1, 'the authenticator signed');

    // The session cookie works over plain HTTP too.
    const headers = { cookie: await sessionCookie(context, server.baseUrl) };
    const me = await call<{ email: string; display_name: string }>(server, 'GET', '/api/me', undefined, headers);
    assert.equal(me.body.email, email);
    assert.equal(me.body.display_name, 'E2E Owner');
    const devices = await call<{ name: string; last_used_at: string | null }[]>(server, 'GET', '/api/devices', undefined, headers);
    assert.deepEqual(devices.body.map((d) => d.name), ['Test phone']);
    assert.ok(devices.body[0]?.last_used_at, 'the sign-in is recorded on the device');

    // Password sign-in from the same page.
    await goTo(page, 'account');
    await signOutAndInWithPassword(page, email, 'correct horse battery');
    await expectSignedIn(page, email);
    await expectNoError(page);
  }, 'E2E Owner');
});

test('with a password session a passkey cannot be removed: the app asks for a passkey sign-in, offers it, and then the removal goes through', { timeout: 120_000 }, async () => {
  await asNewOwner('remove', async ({ page, context }, email) => {
    await addPasskey(page, 'Old phone');
    // Now signed in with the password only.
    await signOutAndInWithPassword(page, email, 'correct horse battery');
    await expectSignedIn(page, email);

    await goTo(page, 'account');
    const item = page.locator('#devices li', { hasText: 'Old phone' });
    await item.getByRole('button', { name: 'Remove Old phone' }).click();
    await item.locator('.confirm-question', { hasText: 'Remove the passkey "Old phone"?' }).waitFor();
    await item.locator('.confirm-yes').click();
    await page.locator('#passkey-reauth').waitFor({ state: 'visible' });
    // The hint is on the Account view up front for a password session; the refusal's message comes
    // with the service's 403, so wait for it rather than read it at once.
    await page.locator('#message', { hasText: /sign in with one of your passkeys/ }).waitFor();
    const headers = { cookie: await sessionCookie(context, server.baseUrl) };
    assert.equal((await call<unknown[]>(server, 'GET', '/api/devices', undefined, headers)).body.length, 1, 'not removed by a password session');

    await page.click('#passkey-reauth-button');
    await page.locator('#passkey-reauth').waitFor({ state: 'hidden' });
    await expectNoError(page);
    await item.getByRole('button', { name: 'Remove Old phone' }).click();
    await item.locator('.confirm-yes').click();
    await page.locator('#devices li', { hasText: 'No passkeys yet' }).waitFor();
    await expectNoError(page);
  });
});

test('an owner without a passkey sees why a card cannot be approved yet, may deny it, and adds a passkey from the card', { timeout: 120_000 }, async () => {
  await asNewOwner('nopasskey', async ({ page, context }) => {
    const key = await agentKey();
    try {
      const agentId = await createAgent(page, 'helper', key.publicJwk);
      const agents = await call<{ id: string; jkt: string }[]>(server, 'GET', '/api/agents', undefined, { cookie: await sessionCookie(context, server.baseUrl) });
      assert.equal(agents.body[0]?.jkt, await jwkThumbprint(key.publicJwk), 'the pasted key is the agent key');
      const ask = async () => {
        const res = await call<{ txn_id: string }>(server, 'POST', '/api/v1/authz-requests', { agent_id: agentId, site: 'shop.example', scopes: ['list'], agent_jwt: await createAgentJwt(key.privateKey, agentId) });
        expectStatus(res, 200, 'access request');
        return res.body.txn_id;
      };

      await goTo(page, 'requests');
      const first = await requestCard(page, await ask());
      await first.locator('.no-passkey', { hasText: 'Approving needs a passkey, and this account has none yet' }).waitFor();
      await first.getByRole('button', { name: 'Deny' }).click();
      await first.locator('.outcome.denied').waitFor();

      const second = await requestCard(page, await ask());
      await second.getByRole('button', { name: 'Add a passkey on this device' }).click();
      await second.locator('.no-passkey').waitFor({ state: 'hidden' });
      await second.getByRole('button', { name: 'Approve' }).click();
      await second.locator('.outcome.ok').waitFor();
      await expectNoError(page);
    } finally {
      key.remove();
    }
  });
});

test('errors say what happened and what to do: a wrong password, a private key pasted as an agent key', { timeout: 60_000 }, async () => {
  await asNewOwner('errors', async ({ page }, email) => {
    const requests: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/api/agents') && r.method() === 'POST') requests.push(r.postData() ?? '');
    });
    // A private JWK is refused in the page: it never leaves the device.
    const key = await agentKey();
    try {
      const privateJwk = await crypto.subtle.exportKey('jwk', key.privateKey);
      await goTo(page, 'agents');
      await page.fill('#agent-name', 'leaky');
      await page.fill('#agent-key', JSON.stringify(privateJwk));
      await page.click('#agent-create-button');
      await page.locator('#message.error', { hasText: 'This is a private key' }).waitFor();
      assert.deepEqual(requests, [], 'the private key was not sent');
      // A key that is not a key: the server's reason, shown as a sentence.
      await page.fill('#agent-key', '-----BEGIN PUBLIC KEY-----\nnot a key\n-----END PUBLIC KEY-----');
      await page.click('#agent-create-button');
      await page.locator('#message.error').waitFor();
      assert.match((await page.locator('#message').textContent()) ?? '', /^[A-Z].*\.$/s);
    } finally {
      key.remove();
    }

    await goTo(page, 'account');
    await signOutAndInWithPassword(page, email, 'wrong password!');
    await page.locator('#message.error', { hasText: 'Invalid email or password.' }).waitFor();
  });
});
