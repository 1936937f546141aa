import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { type Browser, type CDPSession, type Page, chromium } from 'playwright-core';

/** Debian's Chromium, driven by the end-to-end tests that play the owner's phone. */
const CHROMIUM = '/usr/bin/chromium';

/**
 * Launches Chromium headless. A missing browser fails the test (`what`: which end-to-end test) rather
 * than skipping it: it must not pass as "it works".
 */
export async function launchChromium(what: string): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM}: install it (apt-get install chromium) to run the ${what} end-to-end test`);
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
}

/** A virtual WebAuthn authenticator (CDP) with user verification: the phone's passkey. */
export async function addAuthenticator(cdp: CDPSession): Promise<string> {
  await cdp.send('WebAuthn.enable', { enableUI: false });
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  return authenticatorId;
}

/** Fails when the page shows its error message. */
export async function expectNoError(page: Page): Promise<void> {
  const message = page.locator('#message');
  if (await message.isVisible()) assert.notEqual(await message.getAttribute('class'), 'error', (await message.textContent()) ?? '');
}
