// The bell in the header: how many notifications are unread (from GET /api/me, refreshed by the
// app's poll, and from the inbox itself after marking).
import { byId } from '../dom.ts';

export function showUnread(count: number | undefined): void {
  const n = typeof count === 'number' && count > 0 ? Math.floor(count) : 0;
  const badge = byId('unread-count', HTMLElement);
  badge.textContent = n > 99 ? '99+' : String(n);
  badge.hidden = n === 0;
  byId('bell', HTMLElement).setAttribute('aria-label', n ? `Notifications, ${n} unread` : 'Notifications');
}
