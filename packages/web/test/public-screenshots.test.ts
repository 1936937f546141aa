import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../../server/test/helpers/browser.ts';
import { type ServerProcess, startServer } from '../../server/test/helpers/server-process.ts';

const SCREENSHOTS = fileURLToPath(new URL('../../../artifacts/screenshots/', import.meta.url));
const VIEWPORTS = [{ width: 360, height: 740 }, { width: 390, height: 844 }, { width: 1280, height: 800 }] as const;
const PAGES = [
  { name: 'home', path: '/' },
  { name: 'how-it-works', path: '/how-it-works' },
  { name: 'for-shops', path: '/for-shops' },
  { name: 'docs-agents', path: '/docs/agents' },
  { name: 'docs-api', path: '/docs/reference/api' },
  { name: 'not-found', path: '/docs/nope' },
] as const;

/**
 * The public pages in a real browser under the real CSP: the stylesheet applies, nothing is blocked,
 * nothing overflows sideways at phone width. Screenshots go to artifacts/screenshots/ for people to look at.
 */
describe('public pages in Chromium', () => {
  let server: ServerProcess;
  let browser: Browser;
  before(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    server = await startServer({ name: 'public-pages' });
    browser = await launchChromium('public pages');
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  for (const viewport of VIEWPORTS) {
    it(`render cleanly at ${viewport.width}x${viewport.height}`, async () => {
      const context = await browser.newContext({ viewport });
      try {
        const page = await context.newPage();
        const problems: string[] = [];
        page.on('console', (msg) => {
          // A failed load is reported below by its address; every other error (a CSP refusal above all) counts.
          if ((msg.type() === 'error' && !msg.text().startsWith('Failed to load resource')) || /Content Security Policy/i.test(msg.text())) problems.push(`${page.url()}: ${msg.text()}`);
        });
        page.on('response', (res) => {
          const expected404 = res.request().isNavigationRequest() && res.url().endsWith('/docs/nope');
          if (res.status() >= 400 && !expected404) problems.push(`${res.url()}: ${res.status()}`);
        });
        page.on('requestfailed', (req) => problems.push(`${req.url()}: ${req.failure()?.errorText ?? 'failed'}`));
        page.on('pageerror', (err) => problems.push(`${page.url()}: ${err.message}`));
        for (const { name, path } of PAGES) {
          const res = await page.goto(server.baseUrl + path);
          assert.equal(res?.status(), name === 'not-found' ? 404 : 200, path);
          const layout = await page.evaluate(() => ({
            overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
            brandColour: getComputedStyle(document.querySelector('.brand-mark') ?? document.body).backgroundColor,
            fontSize: parseFloat(getComputedStyle(document.querySelector('main p:not(.eyebrow)') ?? document.body).fontSize),
            headerLinks: [...document.querySelectorAll('header a')].filter((a) => (a as HTMLElement).offsetWidth > 0).length,
          }));
          assert.ok(layout.overflow <= 0, `${path} overflows sideways by ${layout.overflow}px at ${viewport.width}px`);
          assert.equal(layout.brandColour, 'rgb(36, 86, 198)', `${path}: the stylesheet did not apply`);
          assert.ok(layout.fontSize >= 15, `${path}: body text of ${layout.fontSize}px`);
          assert.equal(layout.headerLinks, 7, `${path}: the brand, five links and the app button are visible`);
          await page.screenshot({ path: `${SCREENSHOTS}public-${name}-${viewport.width}x${viewport.height}.png`, fullPage: name === 'home' });
        }
        assert.deepEqual(problems, []);
      } finally {
        await context.close();
      }
    });
  }
});
