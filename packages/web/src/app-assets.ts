// Everything the service serves for the owner app (/app), built once per process at start: the
// page, one script bundled from the TypeScript in app/client (with @simplewebauthn/browser), the
// styles, the service worker, the manifest, the icons and the notification badge.
//
// Why a bundle made at start rather than plain files: the browser code is TypeScript checked by the
// same strict `tsc` as the rest of the repository, it imports @simplewebauthn/browser as a typed
// module, and the page loads one script. esbuild bundles it in well under a second, from src/ even
// when the service runs built (see source-dir.ts), so there is no second build step to run or forget
// and no generated file in the repository.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';
import { manifest } from './app/manifest.ts';
import { sourceFile } from './source-dir.ts';

export interface StaticAsset {
  body: string | Buffer;
  /** Content-Type. */
  type: string;
  /** Cache-Control. */
  cache: string;
  /** A strong ETag of the body (quoted), for If-None-Match. */
  etag: string;
}

const APP_DIR = sourceFile('app/');
const read = (file: string): Buffer => readFileSync(new URL(file, APP_DIR));
const text = (file: string): string => read(file).toString('utf8');
const hash = (...parts: (string | Buffer)[]): string => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest('base64url');
};

const JS = 'text/javascript; charset=utf-8';
// Revalidated at each use (a 304 when unchanged), so a new version is picked up at once.
const REVALIDATE = 'no-cache';

/** Bundles one entry point of app/ for the browser. `define` replaces build-time constants. */
function bundle(entry: string, define: Record<string, string> = {}): string {
  let code: string | undefined;
  try {
    const result = buildSync({
      entryPoints: [fileURLToPath(new URL(entry, APP_DIR))],
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'browser',
      target: ['es2020', 'chrome100', 'safari15', 'firefox100'],
      minify: true,
      legalComments: 'none',
      charset: 'utf8',
      define,
      logLevel: 'silent',
    });
    code = result.outputFiles[0]?.text;
  } catch (e) {
    throw new Error(`the owner app (${entry}) could not be built: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (code === undefined) throw new Error(`the owner app (${entry}) could not be built: esbuild produced nothing`);
  return code;
}

function asset(body: string | Buffer, type: string, cache = REVALIDATE): StaticAsset {
  return { body, type, cache, etag: `"${hash(body).slice(0, 27)}"` };
}

function build(): ReadonlyMap<string, StaticAsset> {
  const script = bundle('./client/main.ts');
  const css = text('./shell/app.css');
  const svg = text('./icons/icon.svg');
  const png192 = read('./icons/icon-192.png');
  const png512 = read('./icons/icon-512.png');
  // Only notifications use the badge, and the browser fetches it itself: it is not part of the shell.
  const badge = read('./icons/badge-96.png');
  const manifestJson = JSON.stringify(manifest, null, 2);
  const html = text('./shell/app.html');
  // One version for the whole shell: it names the script and styles in the page and the worker's cache.
  const version = shellVersion([script, css, svg, png192, png512, manifestJson, html]);
  shell = version;
  const shellUrls = ['/app', `/assets/app/app.js?v=${version}`, `/assets/app/app.css?v=${version}`, '/assets/app/icon.svg', '/manifest.webmanifest', '/icon-192.png', '/icon-512.png'];
  const worker = bundle('./worker/service-worker.ts', { SHELL_VERSION: JSON.stringify(version), SHELL_URLS: JSON.stringify(shellUrls) });

  // The take-over page (/app/takeover/{sid}): its own small script and styles, outside the shell.
  const tkScript = bundle('./takeover/takeover.ts');
  const tkCss = text('./takeover/takeover.css');
  const tkVersion = hash(tkScript, tkCss).slice(0, 12);
  takeoverHtml = asset(text('./takeover/takeover.html').replaceAll('__VERSION__', tkVersion), 'text/html; charset=utf-8');

  // The consent page (/connect): its shell is filled per request (connect-page.ts).
  const cnScript = bundle('./connect/connect.ts');
  // The consent page of a person's browser at /oidc/authorize (app-consent-page.ts) shares the shell.
  const acScript = bundle('./connect/app-consent.ts');
  const cnCss = text('./connect/connect.css');
  connect = { html: text('./connect/connect.html'), version: hash(cnScript, acScript, cnCss).slice(0, 12) };

  return new Map([
    ['/assets/app/connect.js', asset(cnScript, JS)],
    ['/assets/app/app-consent.js', asset(acScript, JS)],
    ['/assets/app/connect.css', asset(cnCss, 'text/css; charset=utf-8')],
    ['/assets/app/takeover.js', asset(tkScript, JS)],
    ['/assets/app/takeover.css', asset(tkCss, 'text/css; charset=utf-8')],
    ['/app', asset(html.replaceAll('__VERSION__', version), 'text/html; charset=utf-8')],
    ['/assets/app/app.js', asset(script, JS)],
    ['/assets/app/app.css', asset(css, 'text/css; charset=utf-8')],
    ['/assets/app/icon.svg', asset(svg, 'image/svg+xml', 'public, max-age=86400')],
    ['/manifest.webmanifest', asset(manifestJson, 'application/manifest+json; charset=utf-8')],
    ['/sw.js', asset(worker, JS)],
    ['/icon-192.png', asset(png192, 'image/png', 'public, max-age=86400')],
    ['/icon-512.png', asset(png512, 'image/png', 'public, max-age=86400')],
    ['/badge-96.png', asset(badge, 'image/png', 'public, max-age=86400')],
  ]);
}

let built: ReadonlyMap<string, StaticAsset> | undefined;
let shell: string | undefined;

/** The version of the owner app's shell: a hash of its assets, so any change to any of them changes it. */
export function shellVersion(parts: readonly (string | Buffer)[]): string {
  return hash(...parts).slice(0, 12);
}

/**
 * The version of the app this process serves (GET /api/page-version, decisions §23): the one in
 * the page's script and stylesheet URLs. An open app compares it with its own and reloads when they differ.
 */
export function appVersion(): string {
  built ??= build();
  return shell!;
}
let takeoverHtml: StaticAsset | undefined;
let connect: { html: string; version: string } | undefined;

/** The consent page's shell, with placeholders, and the version of its script and styles. */
export function connectShell(): { html: string; version: string } {
  built ??= build();
  return connect!;
}

/** The take-over page, served at /app/takeover/{sid} to the signed-in owner of that take-over. */
export function takeoverPage(): StaticAsset {
  built ??= build();
  return takeoverHtml!;
}

/** Path -> asset, built on the first call and kept for the life of the process. */
export function appAssets(): ReadonlyMap<string, StaticAsset> {
  built ??= build();
  return built;
}

/** Does the client's If-None-Match name this asset's current body? */
export function isFresh(asset: StaticAsset, ifNoneMatch: string | undefined): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === asset.etag);
}
