// The service worker's global scope, typed. The DOM library is the one this package compiles with,
// and the WebWorker library cannot be loaded beside it, so the few worker types used are named here.
import type { ShowOptions } from './push-rules.ts';

export interface ExtendableEvent extends Event {
  waitUntil(work: Promise<unknown>): void;
}
export interface FetchEvent extends ExtendableEvent {
  readonly request: Request;
  respondWith(response: Response | Promise<Response>): void;
}
export interface PushEvent extends ExtendableEvent {
  readonly data: { text(): string } | null;
}
export interface NotificationEvent extends ExtendableEvent {
  readonly notification: Notification;
  /** '' for a tap on the notification itself, else the action's name. */
  readonly action: string;
}
export interface PushSubscriptionChangeEvent extends ExtendableEvent {
  readonly oldSubscription: PushSubscription | null;
  readonly newSubscription: PushSubscription | null;
}
export interface WindowClient {
  readonly url: string;
  readonly focused: boolean;
  focus(): Promise<WindowClient>;
  postMessage(message: unknown): void;
}
export interface WorkerRegistration {
  readonly pushManager: PushManager;
  showNotification(title: string, options: ShowOptions): Promise<void>;
  getNotifications(filter?: { tag?: string }): Promise<Notification[]>;
}

export interface WorkerScope {
  addEventListener(type: 'install' | 'activate', listener: (e: ExtendableEvent) => void): void;
  addEventListener(type: 'fetch', listener: (e: FetchEvent) => void): void;
  addEventListener(type: 'push', listener: (e: PushEvent) => void): void;
  addEventListener(type: 'notificationclick', listener: (e: NotificationEvent) => void): void;
  addEventListener(type: 'pushsubscriptionchange', listener: (e: PushSubscriptionChangeEvent) => void): void;
  skipWaiting(): Promise<void>;
  readonly clients: {
    claim(): Promise<void>;
    matchAll(options: { type: 'window'; includeUncontrolled: boolean }): Promise<readonly WindowClient[]>;
    openWindow(url: string): Promise<WindowClient | null>;
  };
  readonly registration: WorkerRegistration;
  readonly location: { readonly origin: string };
  readonly navigator: { readonly userAgent: string };
}

export const worker = self as unknown as WorkerScope;

/** What the worker posts to an open app page: open this URL (same-origin, checked on both sides). */
export interface OpenMessage {
  type: 'open';
  url: string;
}
