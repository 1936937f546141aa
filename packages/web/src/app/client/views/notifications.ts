// "Notifications": the inbox of what Mandate told the owner (requests, notes, new agents, ...),
// newest first, unread ones marked. Tapping an item marks it read; a request still waiting opens
// its card. Older items come with "Load more".
import { api } from '../api.ts';
import { report, run } from '../actions.ts';
import { byId, el } from '../dom.ts';
import { when } from '../format.ts';
import { reload } from '../loaders.ts';
import type { InboxItem, InboxPage } from '../types.ts';
import { showUnread, unreadGeneration, unreadMarked } from './bell.ts';
import { verifyPrompt } from './email-link.ts';
import { isPending } from './requests.ts';

const PAGE = 30;

const TYPE_LABELS: Record<string, string> = {
  approval: 'Request',
  note: 'Note from an agent',
  agent_added: 'New agent',
  takeover: 'Takeover',
  auto_approved: 'Approved by a rule',
  security: 'Security',
};

let nextBefore: number | null = null;

async function markRead(item: InboxItem, node: HTMLElement): Promise<void> {
  if (item.read_at) return;
  await api('POST', '/api/notifications/read', { ids: [item.id] });
  unreadMarked();
  item.read_at = new Date().toISOString();
  node.classList.remove('unread');
  node.querySelector('.unread-mark')?.remove();
  await reload('me');
}

/** How a request ended, in place of the "approve with your passkey" its notification was sent with. */
const OUTCOMES: Record<string, string> = {
  pending: 'Waiting for you: tap to open it',
  approved: 'Approved',
  denied: 'Denied',
  expired: 'Expired: not answered in time',
  ended: 'No longer waiting',
};

/**
 * The notification's text as sent (server messages.ts) ends with "· approve with your passkey" while
 * the request waits. Once it is answered that advice is wrong: drop it and say how it ended instead.
 */
function requestLines(item: InboxItem): (HTMLElement | null)[] {
  const status = item.type === 'approval' ? item.request_status : undefined;
  if (!status) return [item.body ? el('span', { className: 'inbox-body', text: item.body }) : null];
  const body = item.body.replace(/\s*·\s*approve with your passkey\s*$/, '');
  return [
    body ? el('span', { className: 'inbox-body', text: body }) : null,
    el('span', { className: `inbox-outcome ${status}`, 'data-status': status, text: OUTCOMES[status] ?? status }),
  ];
}

/** A take-over notice says "tap to take over": its page while the take-over is open, else a note that it ended. */
async function openTakeover(id: string, note: HTMLElement): Promise<void> {
  const open = await api<{ id: string }[]>('GET', '/api/takeover/active');
  if (open.some((t) => t.id === id)) {
    location.href = `/app/takeover/${encodeURIComponent(id)}`;
    return;
  }
  note.textContent = 'This take-over has ended.';
  note.hidden = false;
}

function inboxItem(item: InboxItem): HTMLElement {
  const open = el('button', { type: 'button', className: 'inbox-open' },
    el('span', { className: `inbox-kind ${item.type}`, text: TYPE_LABELS[item.type] ?? item.type }),
    el('span', { className: 'inbox-title', text: item.title }),
    ...requestLines(item),
    el('span', { className: 'meta' }, when(item.created_at), item.read_at ? null : el('span', { className: 'unread-mark', text: ' · Unread' })));
  const note = el('p', { className: 'inbox-note', role: 'status', hidden: true });
  // A security notice (a new passkey, ...) is mailed with a link to undo it, but only to a verified
  // address: while there is none, the notice offers to verify it, next to (not inside) its button.
  const verify = item.type === 'security'
    ? verifyPrompt('inbox-verify', 'Verify your email address so that Mandate can also mail you notices like this one, with a link to undo the change.')
    : null;
  const node = el('li', { className: `inbox-item${item.read_at ? '' : ' unread'}`, 'data-notification': item.id, 'data-type': item.type, 'data-seq': item.seq }, open, note, verify);
  open.addEventListener('click', () => void (async () => {
    try {
      await markRead(item, node);
    } catch (e) {
      await report(e);
      return;
    }
    if (item.type === 'takeover' && item.takeover_id) {
      await openTakeover(item.takeover_id, note).catch(report);
      return;
    }
    if (item.type !== 'approval' || !item.txn_id) return;
    if (isPending(item.txn_id)) location.hash = `requests/${item.txn_id}`;
    else {
      note.textContent = 'No longer waiting: it was answered or it expired.';
      note.hidden = false;
    }
  })());
  return node;
}

function render(page: InboxPage, append: boolean, askedAt: number): void {
  const list = byId('inbox', HTMLElement);
  const nodes = page.items.map(inboxItem);
  if (append) list.append(...nodes);
  else list.replaceChildren(...nodes);
  nextBefore = page.next_before;
  byId('inbox-more', HTMLButtonElement).hidden = nextBefore === null;
  byId('inbox-empty', HTMLElement).hidden = list.children.length > 0;
  byId('inbox-mark-all', HTMLButtonElement).hidden = page.unread === 0;
  showUnread(page.unread, askedAt);
}

/** The first page again (on opening the view, and after marking all read). */
export async function loadInbox(): Promise<void> {
  const askedAt = unreadGeneration();
  render(await api<InboxPage>('GET', `/api/notifications?limit=${PAGE}`), false, askedAt);
}

/** Opening a request from its notification reads every notification about it. A convenience: failures stay quiet. */
export async function markRequestRead(txn: string): Promise<void> {
  try {
    const { marked } = await api<{ marked: number }>('POST', '/api/notifications/read', { txn_ids: [txn] });
    if (!marked) return;
    unreadMarked();
    await reload('me');
  } catch {
    // The bell keeps counting it; the owner can still mark it in the inbox.
  }
}

export function setUpInbox(): void {
  const more = byId('inbox-more', HTMLButtonElement);
  more.addEventListener('click', () => void run(more, 'Loading…', async () => {
    if (nextBefore === null) return;
    const askedAt = unreadGeneration();
    render(await api<InboxPage>('GET', `/api/notifications?limit=${PAGE}&before=${nextBefore}`), true, askedAt);
  }));
  const all = byId('inbox-mark-all', HTMLButtonElement);
  all.addEventListener('click', () => void run(all, 'Marking…', async () => {
    await api('POST', '/api/notifications/read', {});
    unreadMarked();
    await loadInbox();
    // The button goes away with the last unread item: keep the keyboard in the view.
    byId('notifications-title', HTMLElement).focus();
  }));
}

export function resetInbox(): void {
  nextBefore = null;
  byId('inbox', HTMLElement).replaceChildren();
  byId('inbox-more', HTMLButtonElement).hidden = true;
  byId('inbox-empty', HTMLElement).hidden = true;
  showUnread(0);
}
