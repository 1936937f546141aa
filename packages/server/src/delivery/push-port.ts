/**
 * What the outbox worker hands to a push transport (web push, FCM) and what it gets back. The
 * payload type is shared with the owner app's service worker (@mandate/protocol push.ts).
 */
import type { PushPayload } from '@mandate/protocol';

export type { PushPayload, PushType } from '@mandate/protocol';

export interface PushOptions {
  /** Seconds the push service may keep the message for an offline device. */
  ttlSec: number;
  urgency: 'very-low' | 'low' | 'normal' | 'high';
  /** Web push `Topic` (a newer message with the same topic replaces an undelivered one); [A-Za-z0-9_-]{1,32}. */
  topic?: string;
}

/**
 * `sent`: accepted by the push service. `gone`: the subscription or registration no longer exists
 * (404/410, FCM UNREGISTERED): the device is removed. `retry`: a passing failure (5xx, 429, timeout,
 * network): tried again later, after `retryAfterMs` when the service said so. `failed`: refused for
 * good (400 and the like): not retried, kept for diagnosis.
 */
export type SendResult =
  | { outcome: 'sent' }
  | { outcome: 'gone'; detail: string }
  | { outcome: 'retry'; detail: string; retryAfterMs?: number }
  | { outcome: 'failed'; detail: string };

export interface WebPushTarget {
  endpoint: string;
  /** base64url, the subscription's P-256 public key (uncompressed point). */
  p256dh: string;
  /** base64url, the subscription's 16-byte auth secret. */
  auth: string;
}

export interface PushTransport<Target> {
  send(target: Target, payload: PushPayload, options: PushOptions): Promise<SendResult>;
}
