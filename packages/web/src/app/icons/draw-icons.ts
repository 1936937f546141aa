// Draws the app icons (icon-192.png, icon-512.png) from icon.svg, and the notification badge
// (badge-96.png, white on transparent) from badge.svg, with Debian's Chromium. Run once
// after changing the SVG, and commit the PNGs:
//   node --import tsx packages/web/src/app/icons/draw-icons.ts
// The design is full-bleed with the mark inside the central 80 %, so one picture serves as both an
// "any" and a "maskable" icon.
import { readFileSync, writeFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

const here = (file: string): URL => new URL(file, import.meta.url);
const svg = readFileSync(here('./icon.svg'), 'utf8');

const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu'] });
try {
  for (const size of [192, 512]) {
    const page = await browser.newPage({ viewport: { width: size, height: size }, deviceScaleFactor: 1 });
    const src = `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
    await page.setContent(`<html><body style="margin:0"><img src="${src}" width="${size}" height="${size}" style="display:block"></body></html>`);
    await page.locator('img').evaluate((img: HTMLImageElement) => img.decode());
    writeFileSync(here(`./icon-${size}.png`), await page.screenshot({ type: 'png', clip: { x: 0, y: 0, width: size, height: size } }));
    await page.close();
    console.log(`icon-${size}.png written`);
  }
  // The badge keeps its transparency: Android draws only its alpha channel in the status bar.
  const badge = readFileSync(here('./badge.svg'), 'utf8');
  const page = await browser.newPage({ viewport: { width: 96, height: 96 }, deviceScaleFactor: 1 });
  await page.setContent(`<html><body style="margin:0;background:transparent"><img src="data:image/svg+xml;base64,${Buffer.from(badge).toString('base64')}" width="96" height="96" style="display:block"></body></html>`);
  await page.locator('img').evaluate((img: HTMLImageElement) => img.decode());
  writeFileSync(here('./badge-96.png'), await page.screenshot({ type: 'png', omitBackground: true, clip: { x: 0, y: 0, width: 96, height: 96 } }));
  await page.close();
  console.log('badge-96.png written');
} finally {
  await browser.close();
}
