import type { BrowserContext, CDPSession, Page, Worker } from 'playwright-core';
import type { SubscriptionJson } from '../../../server/test/helpers/stand-ins/push-service.ts';
import { until } from '../../../server/test/helpers/until.ts';

/**
 * The app's service worker in Chromium, for the push tests: pushes delivered to it through the
 * DevTools protocol (ServiceWorker.deliverPushMessage, the way a push service's message reaches
 * it), the notifications it shows, and a stand-in for the browser's push service subscription.
 */

export interface ShownNotification {
  title: string;
  body: string;
  tag: string;
  data: unknown;
  actions: { action: string; title: string }[];
  requireInteraction: boolean;
  silent: boolean | null;
  icon: string;
}

export interface AppWorker {
  /** Delivers one push message (a string as it is, anything else as JSON) to the app's worker. */
  deliver(payload: unknown): Promise<void>;
  registrationId: string;
}

/** Waits for the worker registered for `${origin}/app` and answers how to push to it. */
export async function appWorker(cdp: CDPSession, origin: string): Promise<AppWorker> {
  let registrationId: string | undefined;
  cdp.on('ServiceWorker.workerRegistrationUpdated', (e) => {
    for (const r of e.registrations) {
      if (r.scopeURL === `${origin}/app` && !r.isDeleted) registrationId = r.registrationId;
    }
  });
  await cdp.send('ServiceWorker.enable');
  const id = await until('the app worker registration', () => registrationId, { ms: 15_000 });
  return {
    registrationId: id,
    async deliver(payload) {
      const data = typeof payload === 'string' ? payload : JSON.stringify(payload);
      await cdp.send('ServiceWorker.deliverPushMessage', { origin, registrationId: id, data });
    },
  };
}

/** What the worker shows now (registration.getNotifications(), read in the page). */
export function shownNotifications(page: Page): Promise<ShownNotification[]> {
  return page.evaluate(async () => {
    const reg = await navigator.serviceWorker.getRegistration('/app');
    const list = reg ? await reg.getNotifications() : [];
    return list.map((n) => {
      const more = n as Notification & { actions?: { action: string; title: string }[]; requireInteraction?: boolean; silent?: boolean | null };
      return {
        title: n.title, body: n.body, tag: n.tag, data: n.data as unknown, icon: n.icon,
        actions: (more.actions ?? []).map((a) => ({ action: a.action, title: a.title })),
        requireInteraction: more.requireInteraction === true,
        silent: more.silent ?? null,
      };
    });
  });
}

/** Waits until the shown notifications satisfy `check`, and answers them. */
export function waitForNotifications(page: Page, what: string, check: (shown: ShownNotification[]) => boolean): Promise<ShownNotification[]> {
  let last: ShownNotification[] = [];
  return until(what, async () => {
    last = await shownNotifications(page);
    return check(last) ? last : undefined;
  }, { ms: 10_000, describe: () => JSON.stringify(last) });
}

/**
 * Debian's Chromium cannot subscribe to push here: in a Playwright context (incognito) subscribe()
 * fails with "AbortError: Registration failed - permission denied", and with a persistent profile it
 * never answers (its push service is Google's, unreachable from the test machine). So the test
 * replaces PushManager's subscribe/getSubscription, and only those, with a subscription of the
 * push-service stand-in: that plays the browser's push service, nothing of the app. The rest (the
 * permission prompt, the worker registration, the key, POST /api/push) is the app's real code. The
 * subscription lasts across reloads (localStorage), like a real one. Also counts permission prompts
 * (window.permissionAsks), to check that none opens before the owner taps.
 */
export async function standInPushService(context: BrowserContext, sub: SubscriptionJson): Promise<void> {
  // tsx compiles this file with esbuild's keepNames: the named functions of the script below call
  // its `__name` helper, which the page does not have.
  await context.addInitScript({ content: 'globalThis.__name ??= (f) => f;' });
  await context.addInitScript((s: SubscriptionJson) => {
    const STORE = 'test.push-subscription-key';
    const counter = window as unknown as { permissionAsks: number };
    counter.permissionAsks = 0;
    const ask = Notification.requestPermission.bind(Notification);
    Notification.requestPermission = ((callback?: NotificationPermissionCallback) => {
      counter.permissionAsks++;
      return ask(callback);
    }) as typeof Notification.requestPermission;

    const toText = (bytes: Uint8Array): string => btoa(String.fromCharCode(...bytes));
    const fromText = (text: string): ArrayBuffer => Uint8Array.from(atob(text), (c) => c.charCodeAt(0)).buffer;
    const subscription = (key: string): PushSubscription => ({
      endpoint: s.endpoint,
      expirationTime: null,
      options: { applicationServerKey: fromText(key), userVisibleOnly: true },
      getKey: () => null,
      toJSON: () => ({ endpoint: s.endpoint, expirationTime: null, keys: s.keys }),
      unsubscribe: async () => {
        localStorage.removeItem(STORE);
        return true;
      },
    }) as unknown as PushSubscription;

    PushManager.prototype.subscribe = async function subscribe(options?: PushSubscriptionOptionsInit): Promise<PushSubscription> {
      if (Notification.permission !== 'granted') throw new DOMException('Registration failed - permission denied', 'NotAllowedError');
      const key = options?.applicationServerKey;
      if (!(key instanceof Uint8Array)) throw new DOMException('the app passes the key as bytes', 'InvalidAccessError');
      localStorage.setItem(STORE, toText(key));
      return subscription(toText(key));
    };
    PushManager.prototype.getSubscription = async function getSubscription(): Promise<PushSubscription | null> {
      const key = localStorage.getItem(STORE);
      return key ? subscription(key) : null;
    };
  }, sub);
}

/**
 * The app's worker as Playwright reaches it, to run script in it. Chromium stops an idle worker
 * after about 30 s: a message from the page starts it again. The `__name` helper is the one
 * esbuild's keepNames (tsx) makes the serialized functions below call.
 */
async function runningWorker(page: Page): Promise<Worker> {
  const context = page.context();
  const running = () => context.serviceWorkers().find((w) => w.url().endsWith('/sw.js'));
  const worker = running() ?? await until('the app worker running', async () => {
    await page.evaluate(async () => (await navigator.serviceWorker.ready).active?.postMessage('wake up'));
    return running();
  }, { ms: 10_000, everyMs: 500 });
  await worker.evaluate('globalThis.__name ??= (f) => f');
  return worker;
}

/**
 * Dispatches a notificationclick in the worker. The DevTools protocol cannot click a notification;
 * a script-made event runs the app's handler up to what needs a real one (its waitUntil throws and
 * focus() is refused), which is far enough to check that it closes and sends the page on.
 */
export async function clickInWorker(page: Page, tag: string, action = ''): Promise<void> {
  const worker = await runningWorker(page);
  await worker.evaluate(async ({ tag: t, action: a }) => {
    const scope = self as unknown as { registration: ServiceWorkerRegistration; dispatchEvent(e: Event): boolean };
    const [n] = await scope.registration.getNotifications({ tag: t });
    if (!n) throw new Error(`no notification tagged ${t}`);
    const Ctor = (self as unknown as { NotificationEvent: new (type: string, init: { notification: Notification; action: string }) => Event }).NotificationEvent;
    scope.dispatchEvent(new Ctor('notificationclick', { notification: n, action: a }));
  }, { tag, action });
}

/**
 * Dispatches a pushsubscriptionchange (the browser renewed or dropped the subscription; Chromium
 * offers no way to cause one) in the worker, like clickInWorker. With `fresh`, the worker's
 * pushManager.subscribe answers that stand-in subscription (Chromium's own cannot subscribe here,
 * see standInPushService); without, the real one is left to fail.
 */
export async function changeSubscriptionInWorker(page: Page, fresh: SubscriptionJson | null): Promise<void> {
  const worker = await runningWorker(page);
  await worker.evaluate((s: SubscriptionJson | null) => {
    if (s) {
      PushManager.prototype.subscribe = async () => ({
        endpoint: s.endpoint,
        expirationTime: null,
        options: { applicationServerKey: null, userVisibleOnly: true },
        toJSON: () => ({ endpoint: s.endpoint, expirationTime: null, keys: s.keys }),
      }) as unknown as PushSubscription;
    }
    const Ctor = (self as unknown as { ExtendableEvent: new (type: string) => Event }).ExtendableEvent;
    const event = new Ctor('pushsubscriptionchange');
    Object.defineProperties(event, { oldSubscription: { value: null }, newSubscription: { value: null } });
    self.dispatchEvent(event);
  }, fresh);
}
