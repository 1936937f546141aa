import type { FastifyBaseLogger } from 'fastify';
import type { OutboxRepo } from '../store/ports.ts';
import type { Clock } from '../domain/clock.ts';

export type NotificationKind = 'approval_request' | 'dismiss' | 'agent_note';

/**
 * Sends notifications to an owner's devices. Every message is written to the outbox table first
 * (so nothing is ever lost or sent "nowhere") and logged without secrets; push transports (web push,
 * FCM) read the outbox when they are configured. Until then the outbox and the log are the channel.
 */
export class Notifier {
  private log: FastifyBaseLogger | undefined;

  constructor(private readonly outbox: OutboxRepo, private readonly clock: Clock) {}

  /** The HTTP server's logger exists only after the services; it is attached once built. */
  attachLog(log: FastifyBaseLogger): void {
    this.log = log;
  }

  async notifyOwner(userId: string, kind: NotificationKind, payload: Record<string, unknown>): Promise<number> {
    const id = await this.outbox.add({ userId, channel: 'log', kind, payload, createdAt: this.clock.now() });
    this.log?.info({ outboxId: id, userId, kind }, 'notification queued');
    return id;
  }
}
