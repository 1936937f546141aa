// The bell in the header: how many notifications are unread (from GET /api/me, refreshed by the
// app's poll, and from the inbox itself after marking).
import { byId } from '../dom.ts';

/**
 * Bumped each time this app marks notifications read. A count the service gave to a question asked
 * before the latest marking is stale (a slow poll answered after "Mark all read" would bring the
 * badge back for a poll interval), so it is not shown.
 */
let generation = 0;

/** Call once a marking has been answered by the service. */
export function unreadMarked(): void {
  generation++;
}

/** Take before asking the service for a count; pass to `showUnread`. */
export const unreadGeneration = (): number => generation;

export function showUnread(count: number | undefined, askedAt: number = generation): void {
  if (askedAt !== generation) return;
  const n = typeof count === 'number' && count > 0 ? Math.floor(count) : 0;
  const badge = byId('unread-count', HTMLElement);
  badge.textContent = n > 99 ? '99+' : String(n);
  badge.hidden = n === 0;
  byId('bell', HTMLElement).setAttribute('aria-label', n ? `Notifications, ${n} unread` : 'Notifications');
}
