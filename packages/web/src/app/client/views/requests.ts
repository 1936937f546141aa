// "Waiting for you": the open requests, newest first. Cards are kept across refreshes (so choices
// and ticking clocks survive); a card whose request left the list was answered elsewhere or expired.
import { byId } from '../dom.ts';
import { show } from '../message.ts';
import { approvePlace } from '../device.ts';
import type { PendingRequest } from '../types.ts';
import { deviceFacts } from '../webauthn.ts';
import { type RequestCard, requestCard } from './approval-card.ts';

const cards = new Map<string, RequestCard>();
let ticker: ReturnType<typeof setInterval> | undefined;
/** The request named by the URL (#requests/t_...), from a tapped notification, until it was shown. */
let wanted: { txn: string; since: number } | null = null;

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

/** Is this request still waiting for an answer (as of the last refresh)? */
export const isPending = (txn: string): boolean => cards.get(txn)?.state === 'open';

/**
 * Shows the request a notification was about: scrolls to its card and highlights it. The card may
 * not be there yet (the notification can be faster than the last refresh): then the next refresh
 * shows it, or, if that refresh began after this call and does not list it, says it is gone.
 */
export function focusRequest(txn: string): void {
  wanted = { txn, since: Date.now() };
  revealWanted(null);
}

function revealWanted(fetchedAt: number | null): void {
  if (!wanted) return;
  const card = cards.get(wanted.txn);
  if (card && card.state !== 'done') {
    wanted = null;
    for (const other of cards.values()) other.node.classList.remove('highlight');
    card.node.classList.add('highlight');
    card.node.setAttribute('tabindex', '-1');
    card.node.scrollIntoView({ block: 'center' });
    card.node.focus({ preventScroll: true });
    return;
  }
  if (fetchedAt !== null && fetchedAt >= wanted.since) {
    wanted = null;
    show('That request is no longer waiting: it was answered on another device, or it expired.', 'info');
  }
}

/** Brings the cards in line with GET /api/me's `pending`, as fetched at `fetchedAt` (ms, this device's clock). */
export function renderPending(list: PendingRequest[], fetchedAt: number = Date.now()): void {
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
  revealWanted(fetchedAt);
}

/** Every open card says where it can be approved: nowhere yet (no passkey), here, or on the phone that holds the passkey. */
export function showPasskeyNotices(): void {
  const place = approvePlace(deviceFacts());
  for (const card of cards.values()) if (card.state !== 'done') card.advise(place);
}

/** With no agent, "nothing waiting" says how to get one; with agents, it says what will appear. */
export function setHasAgents(has: boolean): void {
  byId('pending-empty-no-agents', HTMLElement).hidden = has;
  byId('pending-empty-agents', HTMLElement).hidden = !has;
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
  wanted = null;
  cards.clear();
  byId('pending', HTMLElement).replaceChildren();
  setHasAgents(true);
  updateCounts();
}
