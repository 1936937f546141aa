/**
 * Mail to owners (decisions §25): the domain queues it, the outbox worker sends it
 * (delivery/outbox-worker.ts, over delivery/mail.ts), so a mail is written in the same transaction
 * as what it is about, retried when the SMTP server fails, and never lost with a node. A mail can
 * hold a secret link (verification, undo): the stored copy is sealed under KEY_ENCRYPTION_KEY when
 * one is set, like the signing keys, so a database copy yields no working link.
 */
import type { KeyEncryption } from '../../crypto/key-encryption.ts';
import type { Repos, Store } from '../../store/ports/index.ts';
import type { Clock } from '../../clock.ts';

/** The outbox channel of mail. */
export const MAIL_CHANNEL = 'email';

/** What a mail is about (the outbox `kind`). */
export type MailKind = 'email_verify' | 'passkey_added' | 'email_changed' | 'email_claim' | 'password_reset';

export interface Mail {
  to: string;
  subject: string;
  /** Plain text only: no HTML to render, nothing remote to load. */
  text: string;
}

/** The domain's port: queue a mail for delivery. */
export interface Mailer {
  /**
   * Queues `mail` about `kind` for `userId` (null: a mail tied to no account, e.g. a take-over link), inside `repos`' transaction when given (the worker is
   * woken once it commits: call `wake()`), else at once. `expiresAt`: after it the mail is pointless
   * (its link has expired) and is not sent.
   */
  queue(m: { userId: string | null; kind: MailKind; mail: Mail; expiresAt: number | null }, repos?: Repos): Promise<void>;
  /** Tells the outbox worker mail is waiting (after a transaction that queued some commits). */
  wake(): void;
}

/** The stored form of a mail: sealed when a key is set, plain otherwise. */
export function sealMail(mail: Mail, keys: KeyEncryption | null): Record<string, unknown> {
  return keys ? { sealed: keys.encrypt(JSON.stringify(mail)) } : { to: mail.to, subject: mail.subject, text: mail.text };
}

/** The mail a stored payload holds, or an error saying why it cannot be read (it crossed the database). */
export function openMail(payload: Record<string, unknown>, keys: KeyEncryption | null): Mail | { error: string } {
  let p: Record<string, unknown> = payload;
  if (typeof payload.sealed === 'string') {
    if (!keys) return { error: 'the mail is sealed: set KEY_ENCRYPTION_KEY to the secret it was stored with' };
    try {
      p = JSON.parse(keys.decrypt(payload.sealed)) as Record<string, unknown>;
    } catch {
      return { error: 'the mail cannot be opened with this KEY_ENCRYPTION_KEY' };
    }
  }
  const { to, subject, text } = p;
  if (typeof to !== 'string' || typeof subject !== 'string' || typeof text !== 'string') return { error: 'malformed mail message' };
  return { to, subject, text };
}

/** The Mailer over the outbox. */
export class OutboxMailer implements Mailer {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly keys: KeyEncryption | null,
    private readonly wakeWorker: () => void,
  ) {}

  async queue(m: { userId: string | null; kind: MailKind; mail: Mail; expiresAt: number | null }, repos: Repos = this.store): Promise<void> {
    await repos.outbox.add({ userId: m.userId, channel: MAIL_CHANNEL, kind: m.kind, payload: sealMail(m.mail, this.keys), createdAt: this.clock.now(), expiresAt: m.expiresAt });
    if (repos === this.store) this.wake();
  }

  wake(): void {
    this.wakeWorker();
  }
}
