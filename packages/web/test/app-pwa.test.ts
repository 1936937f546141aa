import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../../server/test/helpers/browser.ts';
import { startServer, type ServerProcess } from '../../server/test/helpers/server-process.ts';
import { openOwnerTab, signUp } from './helpers/owner-app.ts';

// The installable app: manifest, icons, service worker, and the shell served by the real service.

let server: ServerProcess;
let browser: Browser;

before(async () => {
  browser = await launchChromium('owner app (PWA)');
  server = await startServer({ env: { DATABASE_URL: '' } });
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

const get = (path: string, headers: Record<string, string> = {}) => fetch(`${server.url}${path}`, { headers });

/** Width and height from a PNG's IHDR chunk, after checking the signature. */
function pngSize(bytes: Buffer): { width: number; height: number } {
  assert.deepEqual([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'PNG signature');
  assert.equal(bytes.subarray(12, 16).toString('latin1'), 'IHDR');
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

interface Manifest {
  name: string;
  start_url: string;
  scope: string;
  display: string;
  theme_color: string;
  background_color: string;
  icons: { src: string; sizes: string; type: string; purpose: string }[];
}

test('the manifest names Mandate, starts at /app standalone with a theme colour, and lists real 192 and 512 px PNG icons', async () => {
  const res = await get('/manifest.webmanifest');
  assert.equal(res.status, 200);
  assert.match(String(res.headers.get('content-type')), /^application\/manifest\+json/);
  const manifest = (await res.json()) as Manifest;
  assert.equal(manifest.name, 'Mandate');
  assert.equal(manifest.start_url, '/app');
  assert.equal(manifest.scope, '/app');
  assert.equal(manifest.display, 'standalone');
  assert.match(manifest.theme_color, /^#[0-9a-f]{6}$/i);
  assert.match(manifest.background_color, /^#[0-9a-f]{6}$/i);
  assert.deepEqual([...new Set(manifest.icons.map((i) => i.src))].sort(), ['/icon-192.png', '/icon-512.png']);
  assert.ok(manifest.icons.some((i) => i.purpose === 'maskable'), 'a maskable icon for Android launchers');
  for (const icon of manifest.icons) {
    const png = await get(icon.src);
    assert.equal(png.status, 200, icon.src);
    assert.equal(png.headers.get('content-type'), 'image/png');
    const { width, height } = pngSize(Buffer.from(await png.arrayBuffer()));
    assert.equal(`${width}x${height}`, icon.sizes, `${icon.src} is as large as the manifest says`);
  }
});

test('/app (and /app/) is a shell without inline script or style, under the strict CSP, linking the manifest, icons, script and styles', async () => {
  const slash = await fetch(`${server.url}/app/`, { redirect: 'manual' });
  assert.equal(slash.status, 302);
  assert.equal(slash.headers.get('location'), '/app');
  const res = await get('/app');
  assert.equal(res.status, 200);
  assert.match(String(res.headers.get('content-type')), /^text\/html/);
  const csp = String(res.headers.get('content-security-policy'));
  assert.match(csp, /script-src 'self'(;|$)/);
  assert.match(csp, /default-src 'self'/);
  const html = await res.text();
  assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
  assert.doesNotMatch(html, /<style|\sstyle=|\son[a-z]+=/i, 'no inline style or handlers');
  assert.match(html, /<link rel="manifest" href="\/manifest\.webmanifest">/);
  assert.match(html, /<meta name="theme-color" content="#[0-9a-f]{6}">/i);
  assert.match(html, /<meta name="viewport" content="width=device-width, initial-scale=1/);
  const script = /<script type="module" src="(\/assets\/app\/app\.js\?v=[\w-]+)"><\/script>/.exec(html)?.[1];
  const styles = /<link rel="stylesheet" href="(\/assets\/app\/app\.css\?v=[\w-]+)">/.exec(html)?.[1];
  assert.ok(script && styles, 'script and styles carry the shell version');
  for (const [path, type] of [[script, /^text\/javascript/], [styles, /^text\/css/], ['/assets/app/icon.svg', /^image\/svg\+xml/]] as const) {
    const asset = await get(path);
    assert.equal(asset.status, 200, path);
    assert.match(String(asset.headers.get('content-type')), type, path);
  }
});

test('the shell is revalidated with its ETag: unchanged, the answer is a 304 without a body', async () => {
  for (const path of ['/app', '/assets/app/app.js', '/assets/app/app.css', '/sw.js', '/manifest.webmanifest']) {
    const first = await get(path);
    assert.equal(first.headers.get('cache-control'), 'no-cache', path);
    const etag = first.headers.get('etag');
    assert.ok(etag, path);
    const again = await get(path, { 'if-none-match': etag });
    assert.equal(again.status, 304, path);
    assert.equal(await again.text(), '');
    const changed = await get(path, { 'if-none-match': '"something-else"' });
    assert.equal(changed.status, 200, `${path}: another ETag gets the body`);
  }
});

test('/sw.js is JavaScript served fresh at each check, so a new version installs at once', async () => {
  const res = await get('/sw.js');
  assert.equal(res.status, 200);
  assert.match(String(res.headers.get('content-type')), /^text\/javascript/);
  assert.equal(res.headers.get('cache-control'), 'no-cache');
  const body = await res.text();
  assert.match(body, /mandate-app-/, 'a versioned cache');
  assert.doesNotMatch(body, /importScripts/, 'nothing loaded from elsewhere');
});

test('the service worker keeps the app shell and never an API answer; with the service down the app still opens and says it is offline', { timeout: 90_000 }, async () => {
  const tab = await openOwnerTab(browser);
  const { page } = tab;
  await signUp(page, server.baseUrl, `offline.${Date.now()}@example.com`);
  await page.evaluate(async () => {
    await navigator.serviceWorker.ready;
  });
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null, undefined, { timeout: 15_000 });
  const scope = await page.evaluate(async () => (await navigator.serviceWorker.getRegistration())?.scope);
  assert.equal(scope, `${server.baseUrl}/app`);

  // Use the app a little (every view loads from the API), then look into every cache.
  for (const view of ['agents', 'access', 'activity', 'account', 'requests']) {
    await page.click(`#tabs a[data-view="${view}"]`);
    await page.locator(`section.view[data-view="${view}"]`).waitFor({ state: 'visible' });
  }
  await page.reload();
  await page.locator('#signed-in').waitFor({ state: 'visible' });
  const cached = await page.evaluate(async () => {
    const urls: string[] = [];
    for (const name of await caches.keys()) {
      for (const request of await (await caches.open(name)).keys()) urls.push(new URL(request.url).pathname);
    }
    return urls;
  });
  assert.ok(cached.includes('/app') && cached.includes('/assets/app/app.js') && cached.includes('/assets/app/app.css'), cached.join(' '));
  assert.deepEqual(cached.filter((u) => u.startsWith('/api/')), [], 'no API answer is kept');
  assert.deepEqual([...new Set(cached)].sort(), ['/app', '/assets/app/app.css', '/assets/app/app.js', '/assets/app/icon.svg', '/icon-192.png', '/icon-512.png', '/manifest.webmanifest']);

  // Nothing went wrong while the service ran. While it shuts down, any of the app's API reads may still
  // reach it and get the 503 a closing node answers (then the connection is refused): its polls
  // (/api/me, /api/page-version), and what it loads once #signed-in shows (fresh-clone CI runs saw
  // each of the polls and /api/oauth/providers get it).
  assert.deepEqual(tab.problems, []);
  await server.stop();
  await page.reload();
  await page.locator('#offline').waitFor({ state: 'visible', timeout: 15_000 });
  assert.match((await page.locator('#offline').textContent()) ?? '', /No connection to the service/);
  assert.equal(await page.locator('#signed-out').isVisible(), false, 'an unreachable service is not a sign-out');
  assert.equal(await page.title(), 'Mandate');
  const shuttingDown = /ERR_CONNECTION_REFUSED|Failed to fetch|\b503\b.*\/api\/[\w/-]+(\?\S*)?$/;
  assert.deepEqual(tab.problems.filter((p) => !shuttingDown.test(p)), []);
  await tab.context.close();
});
