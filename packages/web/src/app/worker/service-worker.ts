// The service worker of the owner app (served as /sw.js, scope /app). It keeps the app shell
// (page, script, styles, icons, manifest) so the app starts without a connection. It NEVER caches
// API answers: requests, grants and sessions always come from the service, or not at all.
// Push notifications are handled in push-events.ts.
import { worker } from './scope.ts';
import './push-events.ts';

// Set at start by app-assets.ts (esbuild `define`): the shell's content hash and its URLs.
declare const SHELL_VERSION: string;
declare const SHELL_URLS: string[];

const PREFIX = 'mandate-app-';
const CACHE = `${PREFIX}${SHELL_VERSION}`;
const APP_PAGE = '/app';

worker.addEventListener('install', (e) => {
  e.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(SHELL_URLS)).then(() => worker.skipWaiting()));
});

worker.addEventListener('activate', (e) => {
  e.waitUntil(
    caches.keys()
      .then((keys) => Promise.all(keys.filter((k) => k.startsWith(PREFIX) && k !== CACHE).map((k) => caches.delete(k))))
      .then(() => worker.clients.claim()),
  );
});

/** The page: fresh from the network when there is one (a new version shows at once), else the kept shell. */
async function appPage(request: Request): Promise<Response> {
  try {
    return await fetch(request);
  } catch {
    return (await caches.match(APP_PAGE, { cacheName: CACHE })) ?? Response.error();
  }
}

/** Script, styles and icons: their URLs carry the version, so the kept copy is the right one. */
async function shellAsset(request: Request): Promise<Response> {
  return (await caches.match(request, { cacheName: CACHE })) ?? fetch(request);
}

worker.addEventListener('fetch', (e) => {
  const request = e.request;
  if (request.method !== 'GET') return;
  const url = new URL(request.url);
  // Only this origin's shell is handled; the API and everything else go to the network untouched.
  if (url.origin !== worker.location.origin || url.pathname.startsWith('/api/')) return;
  if (request.mode === 'navigate' && url.pathname === APP_PAGE) e.respondWith(appPage(request));
  else if (SHELL_URLS.includes(url.pathname + url.search)) e.respondWith(shellAsset(request));
});
