import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, CDPSession, Locator, Page } from 'playwright-core';
import { addAuthenticator, expectNoError, launchChromium } from '../../../server/test/helpers/browser.ts';
import { startServer, type ServerProcess } from '../../../server/test/helpers/server-process.ts';
import { type AgentKey, agentKey } from './agent-runner.ts';

/** The owner app driven in Chromium like a person: page helpers shared by the app-* browser tests. */

export const PHONE = { width: 390, height: 844 } as const;
export const DESKTOP = { width: 1280, height: 800 } as const;

export interface OwnerTab {
  context: BrowserContext;
  page: Page;
  cdp: CDPSession;
  authenticatorId: string;
  /** Script errors, CSP violations, failed (5xx) requests and unexpected console errors seen so far. */
  problems: string[];
}

/**
 * A fresh browser context with a virtual passkey authenticator, watching for problems. Chrome logs
 * every 4xx answer as a failed resource (GET /api/me while signed out, a refused input the test
 * provokes); the app shows those itself, so they are not problems. 5xx answers always are.
 */
export async function openOwnerTab(browser: Browser, viewport: { width: number; height: number } = PHONE): Promise<OwnerTab> {
  const phone = viewport.width < 600;
  const context = await browser.newContext({ viewport, ...(phone ? { isMobile: true, hasTouch: true, deviceScaleFactor: 2 } : {}) });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !/Failed to load resource: .* status of 4\d\d/.test(m.text())) problems.push(`console: ${m.text()} ${m.location().url}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 500) problems.push(`server error: ${r.status()} ${r.request().method()} ${r.url()}`);
  });
  await page.exposeFunction('reportCspViolation', (text: string) => problems.push(`CSP violation: ${text}`));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      (window as unknown as { reportCspViolation(t: string): void }).reportCspViolation(`${e.violatedDirective} ${e.blockedURI}`);
    });
  });
  const cdp = await context.newCDPSession(page);
  const authenticatorId = await addAuthenticator(cdp);
  return { context, page, cdp, authenticatorId, problems };
}

/** Fails when the page shows an error message (the app keeps the server helper's #message contract). */
export { expectNoError };

export type View = 'requests' | 'agents' | 'access' | 'activity' | 'account';

/** Taps a tab and waits for its view. */
export async function goTo(page: Page, view: View): Promise<Locator> {
  await page.click(`#tabs a[data-view="${view}"]`);
  const section = page.locator(`section.view[data-view="${view}"]`);
  await section.waitFor({ state: 'visible' });
  return section;
}

export async function signUp(page: Page, base: string, email: string, name = 'Phone Owner', password = 'correct horse battery'): Promise<void> {
  await page.goto(`${base}/app`);
  await page.locator('#signed-out').waitFor({ state: 'visible' });
  await page.fill('#signup-email', email);
  await page.fill('#signup-password', password);
  await page.fill('#signup-name', name);
  await page.click('#signup-button');
  await expectSignedIn(page, email);
}

export async function signInWithPassword(page: Page, base: string, email: string, password = 'correct horse battery'): Promise<void> {
  await page.goto(`${base}/app`);
  await page.locator('#signed-out').waitFor({ state: 'visible' });
  await page.fill('#signin-email', email);
  await page.fill('#signin-password', password);
  await page.click('#signin-password-button');
  await expectSignedIn(page, email);
}

export async function expectSignedIn(page: Page, email: string): Promise<void> {
  await page.locator('#signed-in').waitFor({ state: 'visible' });
  await page.waitForFunction((e) => (document.getElementById('whoami-name')?.textContent ?? '').includes(e), email);
}

/** Registers a passkey on the tab's virtual authenticator from the Account view. */
export async function addPasskey(page: Page, name: string): Promise<void> {
  await goTo(page, 'account');
  await page.fill('#passkey-name', name);
  await page.click('#passkey-add-button');
  await page.locator('#devices li', { hasText: name }).waitFor();
  await expectNoError(page);
}

/** Adds an agent by pasting its public JWK; answers its id as the page shows it. */
export async function createAgent(page: Page, name: string, publicJwk: object): Promise<string> {
  await goTo(page, 'agents');
  await page.fill('#agent-name', name);
  await page.fill('#agent-key', JSON.stringify(publicJwk, null, 2));
  await page.click('#agent-create-button');
  const card = page.locator('#agents article', { hasText: name });
  await card.waitFor();
  await expectNoError(page);
  const id = (await card.locator('.agent-id').textContent()) ?? '';
  assert.match(id, /^ag_[a-z0-9]+$/);
  return id;
}

/** What a test file of the owner app runs against: Chromium, a server on SQLite and an agent's key. */
export interface OwnerAppRig {
  browser: Browser;
  server: ServerProcess;
  key: AgentKey;
  /** The server's DATA_DIR: its embedded database, for a test that checks what the service stored. */
  dataDir: string;
  close(): Promise<void>;
}

/** Starts Chromium, a server (embedded database) and makes an agent key; `close()` ends them. */
export async function startOwnerAppRig(what: string): Promise<OwnerAppRig> {
  const browser = await launchChromium(what);
  const dataDir = mkdtempSync(join(tmpdir(), 'mandate-owner-app-'));
  const server = await startServer({ env: { DATABASE_URL: '', DATA_DIR: dataDir } });
  const key = await agentKey();
  return {
    browser,
    server,
    key,
    dataDir,
    close: async () => {
      await browser.close();
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
      key.remove();
    },
  };
}

/**
 * A new owner on a fresh tab (a phone unless `viewport` says otherwise): signed up, the first passkey
 * set up as the app offers it, and one agent added with `publicJwk`. Answers the tab and the agent id.
 */
export async function ownerWithAgent(rig: OwnerAppRig, opts: { email: string; agentName: string; viewport?: { width: number; height: number } }): Promise<{ tab: OwnerTab; agentId: string }> {
  const tab = await openOwnerTab(rig.browser, opts.viewport ?? PHONE);
  const { page } = tab;
  await signUp(page, rig.server.baseUrl, opts.email);
  await page.locator('#passkey-setup').waitFor({ state: 'visible' });
  await page.click('#passkey-setup-button');
  await page.locator('#passkey-setup').waitFor({ state: 'hidden' });
  const agentId = await createAgent(page, opts.agentName, rig.key.publicJwk);
  return { tab, agentId };
}

/** The card of one request, once it appeared (the app polls: no reload). */
export async function requestCard(page: Page, txnId: string): Promise<Locator> {
  const card = page.locator(`#pending article[data-txn="${txnId}"]`);
  await card.waitFor({ state: 'visible', timeout: 15_000 });
  return card;
}

export async function sessionCookie(context: BrowserContext, base: string): Promise<string> {
  const cookie = (await context.cookies(base)).find((c) => c.name === 'session');
  assert.ok(cookie, 'session cookie set');
  return `session=${cookie.value}`;
}

/** Nothing on the page is wider than the screen. */
export async function expectNoSidewaysScroll(page: Page, what: string): Promise<void> {
  const widths = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
  assert.ok(widths.scroll <= widths.client, `${what}: page is ${widths.scroll}px wide on a ${widths.client}px screen`);
}

/** artifacts/screenshots at the repository root (kept out of git). */
export const SCREENSHOT_DIR = fileURLToPath(new URL('../../../../artifacts/screenshots/', import.meta.url));

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const size = page.viewportSize();
  const path = `${SCREENSHOT_DIR}app-${name}-${size?.width ?? 0}x${size?.height ?? 0}.png`;
  await page.screenshot({ path, fullPage: false });
  return path;
}

/** Opens the Notifications view with the bell in the header and waits for it. */
export async function openNotifications(page: Page): Promise<Locator> {
  await page.click('#bell');
  const section = page.locator('section.view[data-view="notifications"]');
  await section.waitFor({ state: 'visible' });
  return section;
}

/** Opens "Sites you run" the way a person does: the Account tab, then its link. */
export async function openSites(page: Page): Promise<Locator> {
  await goTo(page, 'account');
  await page.getByRole('link', { name: 'Sites you run' }).click();
  const section = page.locator('section.view[data-view="sites"]');
  await section.waitFor({ state: 'visible' });
  return section;
}
