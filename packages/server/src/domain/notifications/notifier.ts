import type { NewOutboxMessage, NotificationRecord, Repos, Store } from '../../store/ports/index.ts';
import type { Clock } from '../../clock.ts';
import { newId } from '../ids.ts';
import { type ApprovalEvent, type OwnerMessage, agentAddedMessage, approvalMessage, dismissPayload, noteMessage, pushPayload, securityMessage, takeoverMessage, autoApprovedMessage } from './messages.ts';
import { DEFAULT_SETTINGS, inQuietHours } from './settings.ts';
import { NOTE_BUDGET, NOTE_DROPPED, NOTE_TTL_MS } from './note-limits.ts';

/** Push `type`s that ask the owner to decide: sent whatever the hour (silently in quiet hours). */
const DECISIONS = new Set(['approval', 'takeover']);
/** How long after a request's expiry its dismissal is still worth sending to a device that was offline. */
const DISMISS_GRACE_MS = 3600_000;

export interface NotifierLog {
  info(details: object, message: string): void;
}

/**
 * The outbox `kind` of a message: its push type, except security notices, which are pushed as
 * `note` but are not agents' notes: they neither expire after an hour nor count in the note budget.
 */
const outboxKind = (m: OwnerMessage): string => (m.type === 'security' ? 'security' : m.push);

/**
 * Reaches the owner (decisions §13). Every push-worthy event becomes a row of the owner's inbox and
 * one outbox message per notifying device (web push, FCM), written with the event when the caller
 * passes its transaction's repositories; the outbox worker (delivery/outbox-worker.ts) sends them,
 * retries, and survives a node that dies mid-send. An approval also schedules a `dismiss` to every
 * device at the request's expiry; an answer brings it forward (`requestSettled`).
 */
export class Notifier {
  private wakeWorker: () => void = () => {};
  private log: NotifierLog | undefined;
  private notesDropped: (count: number) => void = () => {};

  constructor(private readonly store: Store, private readonly clock: Clock) {}

  /** The worker is built after the domain; it is told when messages are ready to send. */
  onQueued(wake: () => void): void {
    this.wakeWorker = wake;
  }

  attachLog(log: NotifierLog): void {
    this.log = log;
  }

  /** Told how many note pushes went over an owner's budget (the metrics count them). */
  onNotesDropped(count: (dropped: number) => void): void {
    this.notesDropped = count;
  }

  /** Messages written inside a caller's transaction are visible once it commits: wake the worker then. */
  wake(): void {
    this.wakeWorker();
  }

  async approvalRequested(userId: string, event: ApprovalEvent, repos: Repos = this.store): Promise<void> {
    await this.publish(userId, approvalMessage(event), repos);
  }

  /**
   * The request was answered (on any device) or cancelled: notifications about it count as read,
   * undelivered approval pushes are dropped, and every device gets its `dismiss` now.
   */
  async requestSettled(userId: string, txnId: string, repos: Repos = this.store): Promise<void> {
    const now = this.clock.now();
    await repos.notifications.markRead(userId, { txnIds: [txnId] }, now);
    await repos.outbox.settleTopic(txnId, now, { cancel: 'approval', expedite: 'dismiss' });
    if (repos === this.store) this.wake();
  }

  /** Answers where the note went: kept in the inbox, and pushed to how many devices. */
  async agentNote(userId: string, agentName: string, note: { title: string; text: string }): Promise<{ inbox: boolean; devices: number }> {
    const { record, devices } = await this.publish(userId, noteMessage(agentName, note));
    return { inbox: record !== null, devices };
  }

  /** `how`: where it came from, e.g. "in the app" or "by <operator>". */
  async agentAdded(userId: string, agentName: string, how: string): Promise<void> {
    await this.publish(userId, agentAddedMessage(agentName, how));
  }

  /** A take-over request: pushed whatever the hour (silently in quiet hours), like an approval. */
  async takeoverRequested(userId: string, event: Parameters<typeof takeoverMessage>[0]): Promise<void> {
    await this.publish(userId, takeoverMessage(event));
  }

  async security(userId: string, title: string, body: string): Promise<void> {
    await this.publish(userId, securityMessage(title, body));
  }

  /** An agent approval was approved by a mode or a plan: an `auto_approved` notice (decisions §19). */
  async autoApproved(userId: string, event: Parameters<typeof autoApprovedMessage>[0], repos: Repos = this.store): Promise<void> {
    await this.publish(userId, autoApprovedMessage(event), repos);
  }

  private async publish(userId: string, m: OwnerMessage, repos: Repos = this.store): Promise<{ record: NotificationRecord | null; devices: number }> {
    const now = this.clock.now();
    const id = newId('n');
    const record = m.type
      ? await repos.notifications.add({ id, userId, type: m.type, title: m.title, body: m.body, createdAt: now, readAt: null, txnId: m.txnId ?? null, takeoverId: m.takeoverId ?? null })
      : null;
    const settings = (await repos.notifySettings.get(userId)) ?? DEFAULT_SETTINGS;
    const quiet = inQuietHours(settings.quietHours, now);
    const decision = DECISIONS.has(m.push);
    const wanted = m.push === 'approval' ? settings.approvals : m.push === 'takeover' ? true : m.type === 'note' ? settings.notes : settings.sessionNotices;
    const devices = wanted && (decision || !quiet) ? await repos.pushDevices.listForUser(userId) : [];
    const messages: NewOutboxMessage[] = [];
    const note = m.type === 'note';
    for (const d of devices) {
      const common = { userId, channel: d.kind, deviceId: d.id, topic: m.txnId ?? null, createdAt: now };
      // A damped device (delivery/damping.ts) is not tried before its damping ends.
      const due = Math.max(now, d.dampedUntil ?? 0);
      messages.push({ ...common, kind: outboxKind(m), payload: { ...pushPayload(id, m, decision && quiet) }, nextAttemptAt: due, expiresAt: m.expiresAt ?? (note ? now + NOTE_TTL_MS : null) });
      if (m.push === 'approval' && m.txnId && m.expiresAt) {
        messages.push({ ...common, kind: 'dismiss', payload: { ...dismissPayload(id, m.txnId) }, nextAttemptAt: m.expiresAt, expiresAt: m.expiresAt + DISMISS_GRACE_MS });
      }
    }
    if (messages.length) await repos.outbox.addMany(messages);
    if (note && messages.length) {
      const dropped = await repos.outbox.dropOverBudget(userId, 'note', NOTE_BUDGET, now, NOTE_DROPPED);
      if (dropped) {
        this.log?.info({ userId, dropped, budget: NOTE_BUDGET }, 'note pushes dropped: over the owner\'s budget of undelivered notes');
        this.notesDropped(dropped);
      }
    }
    this.log?.info({ userId, notification: id, type: m.push, devices: devices.length, quiet }, 'owner notified');
    if (repos === this.store && messages.length) this.wake();
    return { record, devices: devices.length };
  }
}
