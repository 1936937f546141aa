// Push notifications in the service worker: show what the server pushes, close what another device
// answered, open the app where a tap leads, and keep the subscription alive when the browser
// renews it. Every push shows a notification except `dismiss`: Chrome subscribes only with
// userVisibleOnly, and when a push shows nothing it may show its own "This site has been updated in
// the background" instead (it tolerates a few); an answered request closing is worth that.
import { base64UrlToBytes } from '../shared/base64url.ts';
import { deviceName } from '../shared/device-name.ts';
import { APP_PATH, type PushMessage, clickUrl, dismissTags, fallbackNotification, notificationFor, parsePush } from './push-rules.ts';
import { type OpenMessage, type PushSubscriptionChangeEvent, worker } from './scope.ts';

type ReportKind = 'push-received' | 'push-clicked' | 'subscription-lost' | 'error';

/**
 * A diagnostics counter on the server (POST /api/sw/{kind}). Fire and forget: it runs beside the
 * notification, never before it, and a failure is ignored.
 */
function report(kind: ReportKind, detail: string): Promise<void> {
  return fetch(`/api/sw/${kind}`, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ detail: detail.slice(0, 500) }),
  }).then(() => undefined, () => undefined);
}

async function postJson<T>(path: string, body: unknown): Promise<T> {
  const res = await fetch(path, { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${path} answered ${res.status}`);
  return (await res.json()) as T;
}

const errorDetail = (e: unknown): string => (e instanceof Error ? `${e.name}: ${e.message}` : String(e));

/**
 * Requests this device was told to dismiss, kept (the last 200) so that an approval push arriving
 * after its own dismissal (two nodes sending at once, or a push service delivering out of order)
 * never opens a card for a request that is already answered.
 */
const DISMISSED = 'mandate-dismissed';
const DISMISSED_KEPT = 200;
const dismissedKey = (txnId: string): string => `/dismissed/${encodeURIComponent(txnId)}`;

async function rememberDismissed(txnId: string): Promise<void> {
  const cache = await caches.open(DISMISSED);
  await cache.put(dismissedKey(txnId), new Response(''));
  const keys = await cache.keys();
  await Promise.all(keys.slice(0, Math.max(0, keys.length - DISMISSED_KEPT)).map((k) => cache.delete(k)));
}

async function isStaleApproval(msg: PushMessage): Promise<boolean> {
  if (msg.type !== 'approval' || !msg.txn_id) return false;
  if (msg.expires_at && Date.parse(msg.expires_at) <= Date.now()) return true;
  return (await caches.match(dismissedKey(msg.txn_id), { cacheName: DISMISSED })) !== undefined;
}

async function dismiss(msg: PushMessage): Promise<void> {
  if (msg.txn_id) await rememberDismissed(msg.txn_id);
  for (const tag of dismissTags(msg)) {
    for (const n of await worker.registration.getNotifications({ tag })) n.close();
  }
}

async function show(msg: PushMessage | null): Promise<void> {
  // A stale approval shows nothing: Chrome may then show its own short notice, which beats an Approve
  // button for a request that can no longer be answered.
  if (msg && (await isStaleApproval(msg))) return;
  const { title, options } = msg ? notificationFor(msg, Date.now()) : fallbackNotification(Date.now());
  await worker.registration.showNotification(title, options);
}

worker.addEventListener('push', (e) => {
  let text: string | null = null;
  try {
    text = e.data ? e.data.text() : null;
  } catch {
    text = null;
  }
  const msg = parsePush(text);
  const work: Promise<void>[] = [report('push-received', msg?.type ?? 'unreadable')];
  if (!msg) work.push(report('error', text === null ? 'push without data' : `unreadable push payload (${text.length} characters)`));
  const visible = msg?.type === 'dismiss' ? dismiss(msg) : show(msg);
  work.push(visible.catch((err: unknown) => report('error', `push ${msg?.type ?? 'unreadable'}: ${errorDetail(err)}`)));
  e.waitUntil(Promise.all(work));
});

/**
 * Focuses an open app window and sends it there (the page changes its own view, keeping what is on
 * screen), or opens a new window on that URL.
 */
async function openApp(url: string): Promise<void> {
  const windows = await worker.clients.matchAll({ type: 'window', includeUncontrolled: true });
  const apps = windows.filter((c) => new URL(c.url).pathname === APP_PATH);
  const app = apps.find((c) => c.focused) ?? apps[0];
  if (!app) {
    await worker.clients.openWindow(url);
    return;
  }
  const message: OpenMessage = { type: 'open', url };
  app.postMessage(message);
  await app.focus();
}

worker.addEventListener('notificationclick', (e) => {
  e.notification.close();
  // Approve and Deny only open the app on that request, like a tap on the notification. Approving
  // needs the passkey, which only the page can ask for. Denying is not done from here either: the
  // card shows what exactly was asked (agent, site, scopes) before the answer, the worker's call
  // would carry no user gesture or check, and a locked phone's notification is within anyone's reach.
  const url = clickUrl(e.notification.data, worker.location.origin);
  e.waitUntil(Promise.all([
    openApp(url).catch((err: unknown) => report('error', `notificationclick: ${errorDetail(err)}`)),
    report('push-clicked', e.action || 'notification'),
  ]));
});

/** The browser renewed (or dropped) the subscription: subscribe again with the same key and tell the server. */
async function resubscribe(e: PushSubscriptionChangeEvent): Promise<void> {
  const old = e.oldSubscription;
  let fresh = e.newSubscription;
  if (!fresh) {
    const key = old?.options.applicationServerKey
      ?? base64UrlToBytes((await (await fetch('/api/push/keys', { credentials: 'same-origin' })).json() as { vapid_public_key: string }).vapid_public_key);
    fresh = await worker.registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
  }
  await postJson<{ device_id: string }>('/api/push', { ...fresh.toJSON(), name: deviceName(worker.navigator.userAgent) });
  if (old && old.endpoint !== fresh.endpoint) await postJson('/api/push/unsub', { endpoint: old.endpoint }).catch(() => undefined);
}

worker.addEventListener('pushsubscriptionchange', (e) => {
  e.waitUntil(resubscribe(e).catch((err: unknown) => report('subscription-lost', errorDetail(err))));
});
