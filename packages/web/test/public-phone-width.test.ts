import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import { launchChromium } from '../../server/test/helpers/browser.ts';
import { type ServerProcess, startServer } from '../../server/test/helpers/server-process.ts';
import { docsOnDisk } from './public-helpers.ts';

/** An iPhone-sized screen: the width issue 27's reports were made at. */
const PHONE = { width: 390, height: 844 } as const;
const PUBLIC_PAGES = ['/', '/how-it-works', '/for-shops', '/pitch', '/challenge', '/check', '/check?site=127.0.0.1:9', '/docs', '/legal/privacy', '/legal/terms'];

/** Every docs page (each file on disk, each section's index) and the public pages. */
function allPages(): string[] {
  const docs = docsOnDisk();
  const sections = [...new Set(docs.map((d) => `/docs/${d.section}`))];
  return [...PUBLIC_PAGES, ...sections, ...docs.map((d) => `/docs/${d.section}/${d.page}`)];
}

interface WidthReport {
  /** How far the page itself scrolls sideways (0 when it fits). */
  overflow: number;
  /** The text and outermost elements that reach past the screen's right edge, to say what to fix. */
  culprits: string[];
  /** Tables wider than their box, each with whether its box scrolls and shows the scroll hint. */
  wideTables: Array<{ caption: string; scrolls: boolean; hinted: boolean }>;
}

/** Measures the page in the browser; plain DOM code (it runs in the page, not in Node). */
function measure(page: Page): Promise<WidthReport> {
  return page.evaluate(() => {
    const root = document.documentElement;
    const width = window.innerWidth;
    const culprits: string[] = [];
    // Words that do not break overflow their element without widening it, so text is measured as text.
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
      const range = document.createRange();
      range.selectNodeContents(node);
      // Inside a box that scrolls on its own, text may be wider than the screen.
      if (range.getBoundingClientRect().right <= width + 0.5 || node.parentElement?.closest('pre, .table-wrap')) continue;
      culprits.push(`"${(node.textContent ?? '').trim().slice(0, 80)}"`);
    }
    for (const el of document.querySelectorAll('body *')) {
      if (el.getBoundingClientRect().right <= width + 0.5 || el.closest('pre, .table-wrap') !== null) continue;
      // The outermost only: its children say nothing more.
      if (el.parentElement !== null && el.parentElement.getBoundingClientRect().right > width + 0.5) continue;
      culprits.push(`<${el.tagName.toLowerCase()} class="${el.className}">`);
    }
    const wideTables = [...document.querySelectorAll('main table')].flatMap((table) => {
      const box = table.parentElement;
      if (box === null || table.getBoundingClientRect().width <= Math.min(box.clientWidth, width) + 0.5) return [];
      const style = getComputedStyle(box);
      return [{
        caption: (table.textContent ?? '').replace(/\s+/g, ' ').trim().slice(0, 40),
        scrolls: box.classList.contains('table-wrap') && ['auto', 'scroll'].includes(style.overflowX) && box.scrollWidth > box.clientWidth,
        // The hint: shadows fixed to the box's edges (attachment scroll), hidden by covers that travel
        // with the content (attachment local) at an end that is reached. The pixels are checked below.
        hinted: style.backgroundImage.includes('gradient') && style.backgroundAttachment.includes('local') && style.backgroundAttachment.includes('scroll'),
      }];
    });
    return { overflow: root.scrollWidth - width, culprits, wideTables };
  });
}

/**
 * How light the box's edge looks (0 black to 255 white): the median pixel of the column 4 px inside
 * its left or right border, below the header row and clear of the rounded corners. A shadow darkens
 * the whole column, but cells paint their text, rules and code chips over it, so the median, not
 * every pixel, tells whether it is there.
 */
async function edgeLightness(box: Locator, side: 'left' | 'right', decoder: Page): Promise<number> {
  const headerHeight = await box.evaluate((el) => el.querySelector('thead')?.getBoundingClientRect().height ?? 0);
  const png = (await box.screenshot()).toString('base64');
  // Decoded by a blank page's canvas: the tests have no PNG decoder of their own.
  return decoder.evaluate(async ({ png, side, headerHeight }) => {
    const img = new Image();
    img.src = `data:image/png;base64,${png}`;
    await img.decode();
    const canvas = document.createElement('canvas');
    canvas.width = img.width;
    canvas.height = img.height;
    const g = canvas.getContext('2d');
    if (g === null) throw new Error('no 2d canvas');
    g.drawImage(img, 0, 0);
    const top = Math.ceil(headerHeight) + 2;
    const column = g.getImageData(side === 'left' ? 4 : img.width - 5, top, 1, img.height - top - 16).data;
    const levels: number[] = [];
    for (let i = 0; i < column.length; i += 4) levels.push(((column[i] ?? 0) + (column[i + 1] ?? 0) + (column[i + 2] ?? 0)) / 3);
    levels.sort((a, b) => a - b);
    return levels[Math.floor(levels.length / 2)] ?? 0;
  }, { png, side, headerHeight });
}

/** Issue 27: every docs page and public page fits a phone's screen; wide tables scroll in their own box, and say so. */
describe('public pages at phone width (390 px) in Chromium', () => {
  let server: ServerProcess;
  let browser: Browser;
  before(async () => {
    server = await startServer({ name: 'public-phone-width' });
    browser = await launchChromium('public pages at phone width');
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('no page scrolls sideways, and every table wider than the screen scrolls in a box that shows it', async () => {
    const context = await browser.newContext({ viewport: PHONE, deviceScaleFactor: 1 });
    try {
      const page = await context.newPage();
      const pages = allPages();
      assert.ok(pages.length > 25, `only ${pages.length} pages`);
      const problems: string[] = [];
      let wideTables = 0;
      for (const path of pages) {
        const res = await page.goto(server.baseUrl + path);
        assert.equal(res?.status(), 200, path);
        const report = await measure(page);
        if (report.overflow > 0) problems.push(`${path}: ${PHONE.width + report.overflow}px wide; past the edge: ${report.culprits.join(' | ')}`);
        for (const table of report.wideTables) {
          wideTables += 1;
          if (!table.scrolls || !table.hinted) problems.push(`${path}: table "${table.caption}" ${table.scrolls ? 'scrolls with no hint that it does' : 'does not scroll in its own box'}`);
        }
      }
      assert.deepEqual(problems, []);
      // The docs do hold tables too wide for a phone, so the hint check above checked something.
      assert.ok(wideTables > 0, 'no table wider than the screen was found');
    } finally {
      await context.close();
    }
  });

  it('/for-shops: the comparison table shows a shadow on the side with more columns, and none once its end is reached', async () => {
    const context = await browser.newContext({ viewport: PHONE, deviceScaleFactor: 1 });
    try {
      const page = await context.newPage();
      const decoder = await context.newPage();
      await page.goto(`${server.baseUrl}/for-shops`);
      const box = page.locator('#modes ~ .table-wrap');
      await box.scrollIntoViewIfNeeded();
      const hidden = await box.evaluate((el) => el.scrollWidth - el.clientWidth);
      assert.ok(hidden > 20, `the table fits the phone (${hidden}px hidden), so this test shows nothing`);
      const atStart = { left: await edgeLightness(box, 'left', decoder), right: await edgeLightness(box, 'right', decoder) };
      await box.evaluate((el) => el.scrollTo({ left: el.scrollWidth }));
      const atEnd = { left: await edgeLightness(box, 'left', decoder), right: await edgeLightness(box, 'right', decoder) };
      // The surface is white (255); the shadow takes most of the edge column below 235 (about 215).
      assert.ok(atStart.right < 235, `no shadow at the right edge while the third column is cut off (median ${atStart.right})`);
      assert.ok(atStart.left > 245, `a shadow at the left edge with nothing to its left (median ${atStart.left})`);
      assert.ok(atEnd.left < 235, `no shadow at the left edge once scrolled (median ${atEnd.left})`);
      assert.ok(atEnd.right > 245, `a shadow at the right edge with nothing more to its right (median ${atEnd.right})`);
    } finally {
      await context.close();
    }
  });
});
