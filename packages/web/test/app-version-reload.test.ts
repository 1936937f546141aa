import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../../server/test/helpers/browser.ts';
import { startServer, type ServerProcess } from '../../server/test/helpers/server-process.ts';
import { openOwnerTab, signUp } from './helpers/owner-app.ts';

// The open app reloads itself when GET /api/page-version names another version than the one it runs
// (decisions §23), but only at a safe moment: not with unsaved input (nor during a passkey ceremony).

let server: ServerProcess;
let browser: Browser;

before(async () => {
  browser = await launchChromium('owner app version reload');
  server = await startServer({ env: { DATABASE_URL: '' } });
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

test('a new version: no reload while a field holds unsaved input; reloaded once the field is back as it was', { timeout: 60_000 }, async () => {
  const tab = await openOwnerTab(browser);
  const { page } = tab;
  try {
    await signUp(page, server.baseUrl, `reload-${Date.now()}@example.com`);
    const own = await page.evaluate(() => new URL((document.querySelector('script[src*="/assets/app/app.js"]') as HTMLScriptElement).src).searchParams.get('v'));
    const served = (await (await fetch(`${server.url}/api/page-version`)).json() as { version: string }).version;
    assert.equal(own, served, 'the page runs the version the server names');

    // The same version: a check (the app coming into view) changes nothing.
    await page.evaluate(() => {
      (window as unknown as { marker: number }).marker = 1;
      document.dispatchEvent(new Event('visibilitychange'));
    });
    await page.waitForTimeout(1000);
    assert.equal(await page.evaluate(() => (window as unknown as { marker?: number }).marker), 1);

    // A deploy: the server now names another version. The person is typing, so the app waits.
    await page.route('**/api/page-version', (route) => route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify({ version: 'newversion00' }) }));
    const field = await page.evaluate(() => {
      const input = [...document.querySelectorAll<HTMLInputElement>('#signed-in input')].find((i) => ['text', 'email', 'search', ''].includes(i.type) || i.type === 'text');
      if (!input) return null;
      input.value = `${input.defaultValue}typed, not sent`;
      input.dispatchEvent(new Event('input', { bubbles: true })); // as typing does
      return input.id || input.name;
    });
    assert.ok(field, 'a text field of the signed-in app');
    const asked = page.waitForRequest('**/api/page-version');
    await page.evaluate(() => document.dispatchEvent(new Event('visibilitychange')));
    await asked;
    await page.waitForTimeout(4000); // past the app's next poll (3 s)
    assert.equal(await page.evaluate(() => (window as unknown as { marker?: number }).marker), 1, 'not reloaded with unsaved input');

    // The field is back as the page made it: the next poll reloads the app.
    await page.unroute('**/api/page-version');
    const reloaded = page.waitForEvent('load', { timeout: 15_000 });
    await page.evaluate(() => {
      for (const input of document.querySelectorAll<HTMLInputElement>('#signed-in input')) if (input.type !== 'checkbox' && input.type !== 'radio') input.value = input.defaultValue;
    });
    await reloaded;
    await page.locator('#signed-in').waitFor({ state: 'visible' });
    assert.equal(await page.evaluate(() => (window as unknown as { marker?: number }).marker), undefined, 'a new page');
    // The new page runs the served version: no further reload.
    await page.evaluate(() => {
      (window as unknown as { marker: number }).marker = 2;
    });
    await page.waitForTimeout(4000);
    assert.equal(await page.evaluate(() => (window as unknown as { marker?: number }).marker), 2);
    assert.deepEqual(tab.problems, []);
  } finally {
    await tab.context.close();
  }
});
