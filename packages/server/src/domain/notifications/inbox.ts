import type { AuthzRequestRecord, NotificationMarks, NotificationRecord, Store } from '../../store/ports/index.ts';
import type { Clock } from '../../clock.ts';

/** The inbox keeps 30 days (interface.md "Limits"); older rows are not listed and are purged. */
export const INBOX_DAYS = 30;
export const INBOX_MS = INBOX_DAYS * 86_400_000;
export const INBOX_PAGE = { default: 30, max: 100 } as const;

/**
 * How the request behind an `approval` notification stands now, so the inbox does not keep saying
 * "approve with your passkey" after it was answered: `approved` (a used step-up too), `denied`
 * (by the owner, or cancelled when the agent was revoked or deleted), `expired` (unanswered in
 * time), `pending`; `ended` when the request is gone (purged after it ended).
 */
export type RequestOutcome = 'pending' | 'approved' | 'denied' | 'expired' | 'ended';

export interface InboxItem extends NotificationRecord {
  /** Only on notifications about a request (`txnId` set). */
  requestStatus?: RequestOutcome;
}

export function requestOutcome(r: AuthzRequestRecord | undefined, now: number): RequestOutcome {
  if (!r) return 'ended';
  if (r.status === 'consumed') return 'approved';
  if (r.status === 'pending' && r.expiresAt <= now) return 'expired';
  return r.status;
}

export interface InboxPage {
  items: InboxItem[];
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
    return { items: await this.withOutcomes(items), nextBefore: items.length === limit && last ? last.seq : null, unread: await this.store.notifications.unreadCount(userId, since) };
  }

  /** Looks up each request the page mentions (a page holds at most INBOX_PAGE.max items). */
  private async withOutcomes(items: NotificationRecord[]): Promise<InboxItem[]> {
    const now = this.clock.now();
    const txnIds = [...new Set(items.flatMap((n) => (n.txnId ? [n.txnId] : [])))];
    const requests = await Promise.all(txnIds.map(async (id) => [id, await this.store.authzRequests.byId(id)] as const));
    const outcomes = new Map(requests.map(([id, r]) => [id, requestOutcome(r, now)]));
    return items.map((n) => {
      const outcome = n.txnId ? outcomes.get(n.txnId) : undefined;
      return outcome ? { ...n, requestStatus: outcome } : n;
    });
  }

  unread(userId: string): Promise<number> {
    return this.store.notifications.unreadCount(userId, this.since());
  }

  markRead(userId: string, marks: NotificationMarks): Promise<number> {
    return this.store.notifications.markRead(userId, marks, this.clock.now());
  }
}
