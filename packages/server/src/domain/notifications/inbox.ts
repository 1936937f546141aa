import type { NotificationMarks, NotificationRecord, Store } from '../../store/ports.ts';
import type { Clock } from '../clock.ts';

/** The inbox keeps 30 days (interface.md "Limits"); older rows are not listed and are purged. */
export const INBOX_DAYS = 30;
export const INBOX_MS = INBOX_DAYS * 86_400_000;
export const INBOX_PAGE = { default: 30, max: 100 } as const;

export interface InboxPage {
  items: NotificationRecord[];
  /** The `before` of the next page, or null when this is the last. */
  nextBefore: number | null;
  unread: number;
}

/** The owner's notification inbox (GET /api/notifications, POST /api/notifications/read). */
export class Inbox {
  constructor(private readonly store: Store, private readonly clock: Clock) {}

  private since(): number {
    return this.clock.now() - INBOX_MS;
  }

  async page(userId: string, before: number, limit: number): Promise<InboxPage> {
    const since = this.since();
    const items = await this.store.notifications.list(userId, { before, limit, since });
    const last = items.at(-1);
    return { items, nextBefore: items.length === limit && last ? last.seq : null, unread: await this.store.notifications.unreadCount(userId, since) };
  }

  unread(userId: string): Promise<number> {
    return this.store.notifications.unreadCount(userId, this.since());
  }

  markRead(userId: string, marks: NotificationMarks): Promise<number> {
    return this.store.notifications.markRead(userId, marks, this.clock.now());
  }
}
