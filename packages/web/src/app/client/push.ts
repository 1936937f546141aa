// This browser's push subscription: whether notifications can be, are, or are not on here, and
// turning them on and off. The browser's permission prompt opens only from turnOn(), which runs
// on a tap ("Turn on notifications"), never when the page loads.
import { base64UrlToBytes } from '../shared/base64url.ts';
import { deviceName } from '../shared/device-name.ts';
import { api, seg, userError } from './api.ts';
import type { Device } from './types.ts';

export type PushState = 'unsupported' | 'blocked' | 'on' | 'off';

/** The device id the server gave this browser's subscription (POST /api/push), to find it in GET /api/devices. */
const DEVICE_KEY = 'mandate.push-device';
/** A browser whose push service cannot be reached may never answer pushManager.subscribe. */
const SUBSCRIBE_TIMEOUT_MS = 20_000;
const SCOPE = '/app';

const NOT_SUPPORTED = 'This browser cannot show notifications from Mandate. On an iPhone or iPad, add Mandate to the Home Screen first (Share, then "Add to Home Screen") and open it from there.';
export const BLOCKED_HELP = 'Notifications for this site are blocked in the browser. To allow them, open the site settings (the icon left of the address), set Notifications to Allow, then come back here.';

export const pushSupported = (): boolean =>
  'serviceWorker' in navigator && typeof window.PushManager === 'function' && typeof window.Notification === 'function';

function storedDeviceId(): string | null {
  try {
    return localStorage.getItem(DEVICE_KEY);
  } catch {
    return null;
  }
}

function storeDeviceId(id: string | null): void {
  try {
    if (id) localStorage.setItem(DEVICE_KEY, id);
    else localStorage.removeItem(DEVICE_KEY);
  } catch {
    // Storage off (a strict privacy mode): the state then shows "off" after a reload; nothing breaks.
  }
}

/** Is this device-list entry this browser's own subscription? */
export const isThisBrowser = (d: Device): boolean => d.kind === 'webpush' && d.id === storedDeviceId();

async function currentSubscription(): Promise<PushSubscription | null> {
  const reg = await navigator.serviceWorker.getRegistration(SCOPE);
  return reg ? reg.pushManager.getSubscription() : null;
}

/** On: permission given, a subscription here, and the server still lists it (it may have been removed elsewhere). */
export async function pushState(devices: Device[]): Promise<PushState> {
  if (!pushSupported()) return 'unsupported';
  if (Notification.permission === 'denied') return 'blocked';
  if (Notification.permission !== 'granted') return 'off';
  const listed = devices.some(isThisBrowser);
  return listed && (await currentSubscription()) ? 'on' : 'off';
}

/** The app's worker registration, made now if the page has not registered it yet; active before it returns. */
async function workerRegistration(): Promise<ServiceWorkerRegistration> {
  if (!(await navigator.serviceWorker.getRegistration(SCOPE))) await navigator.serviceWorker.register('/sw.js', { scope: SCOPE });
  return navigator.serviceWorker.ready;
}

const sameKey = (a: ArrayBuffer | null, b: Uint8Array): boolean => {
  if (!a || a.byteLength !== b.byteLength) return false;
  const view = new Uint8Array(a);
  return view.every((byte, i) => byte === b[i]);
};

function withTimeout<T>(work: Promise<T>, ms: number, text: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(userError(text)), ms)));
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

async function subscribe(reg: ServiceWorkerRegistration, key: Uint8Array<ArrayBuffer>): Promise<PushSubscription> {
  try {
    return await withTimeout(
      reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key }),
      SUBSCRIBE_TIMEOUT_MS,
      "The browser's push service did not answer. Check the connection and try again.",
    );
  } catch (e) {
    if (e instanceof DOMException) {
      // Chrome answers AbortError in a private window, and when its push service refuses.
      throw userError(`This browser could not set up notifications (${e.message}). They do not work in a private window; otherwise try again later.`);
    }
    throw e;
  }
}

/** Asks the browser's permission (this must run from a tap), subscribes, and tells the server. */
export async function turnOn(): Promise<void> {
  if (!pushSupported()) throw userError(NOT_SUPPORTED);
  const permission = await Notification.requestPermission();
  if (permission === 'denied') throw userError(BLOCKED_HELP);
  if (permission !== 'granted') throw userError('Notifications were not allowed. Tap "Turn on" again and choose Allow.');
  const reg = await workerRegistration();
  const { vapid_public_key } = await api<{ vapid_public_key: string }>('GET', '/api/push/keys');
  const key = base64UrlToBytes(vapid_public_key);
  let sub = await reg.pushManager.getSubscription();
  // A subscription made for another server key cannot carry this server's pushes.
  if (sub && !sameKey(sub.options.applicationServerKey, key)) {
    await sub.unsubscribe();
    sub = null;
  }
  sub ??= await subscribe(reg, key);
  const { device_id } = await api<{ device_id: string }>('POST', '/api/push', { ...sub.toJSON(), name: deviceName(navigator.userAgent) });
  storeDeviceId(device_id);
}

/** Stops pushes to this browser: the server forgets the subscription, then the browser drops it. */
export async function turnOff(): Promise<void> {
  const sub = pushSupported() ? await currentSubscription() : null;
  const id = storedDeviceId();
  if (sub) await api('POST', '/api/push/unsub', { endpoint: sub.endpoint });
  else if (id) await api('DELETE', `/api/devices/${seg(id)}`).catch(() => undefined);
  await forgetHere();
}

/** Drops the subscription in this browser only (the server already removed it). */
export async function forgetHere(): Promise<void> {
  storeDeviceId(null);
  const sub = pushSupported() ? await currentSubscription() : null;
  await sub?.unsubscribe().catch(() => false);
}
