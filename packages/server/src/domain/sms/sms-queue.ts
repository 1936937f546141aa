/**
 * Text messages to owners (decisions §14): the domain queues them, the outbox worker sends them
 * (delivery/outbox-worker.ts, over the configured SmsSender), like mail: written in the same
 * transaction as the code they carry, retried when the provider fails, never lost with a node.
 * Every SMS holds a one-time code, so the stored copy is sealed under KEY_ENCRYPTION_KEY when one is
 * set (a database copy then yields no working code).
 */
import type { KeyEncryption } from '../../crypto/key-encryption.ts';
import type { Repos, Store } from '../../store/ports/index.ts';
import type { Clock } from '../../clock.ts';

/** The outbox channel of text messages. */
export const SMS_CHANNEL = 'sms';

/** What an SMS is about (the outbox `kind`). */
export type SmsKind = 'phone_code' | 'recovery_code';

export interface Sms {
  /** E.164. */
  to: string;
  text: string;
}

/** The domain's port: queue an SMS for delivery. */
export interface SmsQueue {
  /** Inside `repos`' transaction when given (then call `wake()` once it commits), else at once. */
  queue(m: { userId: string; kind: SmsKind; sms: Sms; expiresAt: number }, repos?: Repos): Promise<void>;
  wake(): void;
}

export function sealSms(sms: Sms, keys: KeyEncryption | null): Record<string, unknown> {
  return keys ? { sealed: keys.encrypt(JSON.stringify(sms)) } : { to: sms.to, text: sms.text };
}

/** The SMS a stored payload holds, or why it cannot be read (it crossed the database). */
export function openSms(payload: Record<string, unknown>, keys: KeyEncryption | null): Sms | { error: string } {
  let p: Record<string, unknown> = payload;
  if (typeof payload.sealed === 'string') {
    if (!keys) return { error: 'the SMS is sealed: set KEY_ENCRYPTION_KEY to the secret it was stored with' };
    try {
      p = JSON.parse(keys.decrypt(payload.sealed)) as Record<string, unknown>;
    } catch {
      return { error: 'the SMS cannot be opened with this KEY_ENCRYPTION_KEY' };
    }
  }
  const { to, text } = p;
  if (typeof to !== 'string' || typeof text !== 'string') return { error: 'malformed SMS message' };
  return { to, text };
}

/** The SmsQueue over the outbox. */
export class OutboxSms implements SmsQueue {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly keys: KeyEncryption | null,
    private readonly wakeWorker: () => void,
  ) {}

  async queue(m: { userId: string; kind: SmsKind; sms: Sms; expiresAt: number }, repos: Repos = this.store): Promise<void> {
    await repos.outbox.add({ userId: m.userId, channel: SMS_CHANNEL, kind: m.kind, payload: sealSms(m.sms, this.keys), createdAt: this.clock.now(), expiresAt: m.expiresAt });
    if (repos === this.store) this.wake();
  }

  wake(): void {
    this.wakeWorker();
  }
}
