// "Waiting for you": the open requests, newest first. Cards are kept across refreshes (so choices
// and ticking clocks survive); a card whose request left the list was answered elsewhere or expired.
import { byId } from '../dom.ts';
import { session } from '../session.ts';
import type { PendingRequest } from '../types.ts';
import { type RequestCard, requestCard } from './approval-card.ts';

const cards = new Map<string, RequestCard>();
let ticker: ReturnType<typeof setInterval> | undefined;

function updateCounts(): void {
  const open = [...cards.values()].filter((c) => c.state !== 'done').length;
  byId('pending-empty', HTMLElement).hidden = cards.size > 0;
  const badge = byId('pending-count', HTMLElement);
  badge.textContent = String(open);
  badge.hidden = open === 0;
  badge.setAttribute('aria-label', `${open} waiting`);
  document.title = open ? `(${open}) Mandate` : 'Mandate';
}

const forget = (card: RequestCard): void => {
  cards.delete(card.request.id);
  updateCounts();
};

/** Brings the cards in line with GET /api/me's `pending`. */
export function renderPending(list: PendingRequest[]): void {
  const listed = new Set(list.map((p) => p.id));
  for (const card of cards.values()) {
    if (!listed.has(card.request.id) && card.state === 'open') card.finish('No longer waiting: answered on another device, or expired.', 'gone');
  }
  const arrived: HTMLElement[] = [];
  for (const p of list) {
    if (cards.has(p.id)) continue;
    const card = requestCard(p, forget);
    cards.set(p.id, card);
    arrived.push(card.node);
  }
  // The list is newest first; what arrived since the last look goes on top, in that order.
  if (arrived.length) byId('pending', HTMLElement).prepend(...arrived);
  updateCounts();
  showPasskeyNotices();
}

/** Every open card says so when the owner has no passkey to approve with. */
export function showPasskeyNotices(): void {
  for (const card of cards.values()) if (card.state !== 'done') card.passkeyNotice(session.passkeys === 0);
}

export function startRequestClock(): void {
  stopRequestClock();
  ticker = setInterval(() => {
    for (const card of cards.values()) card.tick();
  }, 1000);
}

export function stopRequestClock(): void {
  if (ticker) clearInterval(ticker);
  ticker = undefined;
}

export function resetRequests(): void {
  stopRequestClock();
  cards.clear();
  byId('pending', HTMLElement).replaceChildren();
  updateCounts();
}
