// What the service worker does with a push, as pure functions (unit-tested in node, see
// test/app-push-rules.test.ts): read the payload, choose the notification to show, choose which
// notifications a `dismiss` closes, and where a tap leads.

import type { PushPayload, PushType } from '@mandate/protocol';

export type { PushType };
// The list again, as a value: the worker bundle takes only types from @mandate/protocol (its values
// would pull node:crypto into the browser). `satisfies` keeps every name here a real push type.
export const PUSH_TYPES = ['approval', 'dismiss', 'note', 'agent_added', 'takeover', 'test'] as const satisfies readonly PushType[];

/** The JSON the server sends: one definition with the server (@mandate/protocol push.ts). */
export type PushMessage = PushPayload;

/** What a notification carries for the click handler. */
export interface NotificationData {
  url: string;
  type: PushType | 'fallback';
  id: string;
  txn_id?: string;
}

export interface NotificationAction {
  action: 'approve' | 'deny';
  title: string;
}

/** NotificationOptions plus what the DOM typings of this package leave out (actions, renotify, timestamp). */
export interface ShowOptions {
  body: string;
  tag: string;
  data: NotificationData;
  icon: string;
  badge: string;
  requireInteraction: boolean;
  silent: boolean;
  renotify: boolean;
  timestamp: number;
  actions?: NotificationAction[];
}

export const ICON = '/icon-192.png';
/** Monochrome (white on transparent): Android draws the badge in the status bar as a mask. */
export const BADGE = '/badge-96.png';
/** Where everything leads when nothing better is known. */
export const APP_PATH = '/app';
const INBOX_URL = '/app#notifications';

const isType = (v: unknown): v is PushType => typeof v === 'string' && (PUSH_TYPES as readonly string[]).includes(v);
const str = (v: unknown, max: number): string | undefined => (typeof v === 'string' && v.length <= max ? v : undefined);

/** The payload, or null when it is not JSON of the expected shape (then the caller records an error). */
export function parsePush(text: string | null): PushMessage | null {
  if (text === null) return null;
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return null;
  }
  if (!data || typeof data !== 'object' || Array.isArray(data)) return null;
  const o = data as Record<string, unknown>;
  const id = str(o.id, 200);
  if (!isType(o.type) || !id) return null;
  const msg: PushMessage = {
    type: o.type,
    id,
    title: str(o.title, 500) ?? '',
    body: str(o.body, 4000) ?? '',
    url: str(o.url, 2000) ?? INBOX_URL,
  };
  const kind = str(o.kind, 100);
  const txn = str(o.txn_id, 200);
  const expires = str(o.expires_at, 100);
  if (kind) msg.kind = kind;
  if (txn) msg.txn_id = txn;
  if (expires) msg.expires_at = expires;
  if (o.silent === true) msg.silent = true;
  const details = boundDetails(o.details);
  if (details) msg.details = details;
  if (msg.type !== 'dismiss' && !msg.title) return null;
  return msg;
}

/** The details an approval is bound to (decisions §29), when the payload has them in shape. */
function boundDetails(v: unknown): { summary: string; digest: string } | undefined {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return undefined;
  const d = v as Record<string, unknown>;
  const summary = str(d.summary, 500);
  const digest = str(d.digest, 100);
  return summary && digest ? { summary, digest } : undefined;
}

/**
 * What the notification says: for an approval bound to details, the summary first, as written (a
 * notification is plain text), then the service's line with the action.
 */
const bodyOf = (msg: PushMessage): string => (msg.type === 'approval' && msg.details ? `${msg.details.summary}\n${msg.body}` : msg.body);

/** One notification per request (its txn), so a later push about it replaces it and a dismiss finds it. */
export const tagFor = (msg: Pick<PushMessage, 'type' | 'id' | 'txn_id'>): string =>
  msg.type === 'approval' && msg.txn_id ? msg.txn_id : msg.id;

/** The tags a `dismiss` closes: the request's (approvals are tagged by txn) and the notification's own id. */
export const dismissTags = (msg: PushMessage): string[] => [...new Set([msg.txn_id, msg.id].filter((t): t is string => Boolean(t)))];

export function notificationFor(msg: PushMessage, now: number): { title: string; options: ShowOptions } {
  const approval = msg.type === 'approval';
  const data: NotificationData = { url: msg.url, type: msg.type, id: msg.id };
  if (msg.txn_id) data.txn_id = msg.txn_id;
  const options: ShowOptions = {
    body: bodyOf(msg),
    tag: tagFor(msg),
    data,
    icon: ICON,
    badge: BADGE,
    // A request waits for an answer: it stays until the owner acts or another device answers.
    requireInteraction: approval,
    // Quiet hours: the server still sends approvals, marked silent (no sound, no vibration).
    silent: msg.silent === true,
    renotify: false,
    timestamp: now,
  };
  if (approval) {
    options.actions = [{ action: 'approve', title: 'Approve' }, { action: 'deny', title: 'Deny' }];
  }
  return { title: msg.title, options };
}

/**
 * Shown when a push cannot be read. Chrome requires a visible notification for every push
 * (userVisibleOnly), and says "This site has been updated in the background" otherwise; this one
 * at least leads somewhere useful.
 */
export function fallbackNotification(now: number): { title: string; options: ShowOptions } {
  return {
    title: 'Mandate',
    options: {
      body: 'Something new is waiting for you. Open Mandate to see it.',
      tag: 'mandate-fallback',
      data: { url: INBOX_URL, type: 'fallback', id: 'fallback' },
      icon: ICON,
      badge: BADGE,
      requireInteraction: false,
      silent: true,
      renotify: false,
      timestamp: now,
    },
  };
}

/**
 * Where a tap on a notification leads: its `url` when it is a path of the app on this origin
 * (`/app`, `/app#...`, `/app/...`), otherwise the app itself. A payload can never send the owner to
 * another site, or to a page of this site outside the app.
 */
export function clickUrl(data: unknown, origin: string): string {
  const fallback = new URL(APP_PATH, origin).href;
  const raw = data && typeof data === 'object' ? (data as { url?: unknown }).url : undefined;
  if (typeof raw !== 'string' || !raw.startsWith('/') || raw.startsWith('//')) return fallback;
  let url: URL;
  try {
    url = new URL(raw, origin);
  } catch {
    return fallback;
  }
  if (url.origin !== new URL(origin).origin || (url.pathname !== APP_PATH && !url.pathname.startsWith(`${APP_PATH}/`))) return fallback;
  return url.href;
}
