// One view at a time, chosen by the URL fragment (#requests, #agents, ...), so the back button
// and bookmarks work and nothing needs a server route beyond /app.
import { clearMessage } from './message.ts';

export const VIEWS = ['requests', 'agents', 'access', 'activity', 'account'] as const;
export type View = (typeof VIEWS)[number];

const DEFAULT_VIEW: View = 'requests';
const shownHandlers = new Map<View, () => void>();
let current: View | null = null;

const isView = (v: string): v is View => (VIEWS as readonly string[]).includes(v);

function currentView(): View {
  const fromHash = location.hash.replace(/^#/, '');
  return isView(fromHash) ? fromHash : DEFAULT_VIEW;
}

/** Called each time the view is shown (load its data). */
export function onShown(view: View, handler: () => void): void {
  shownHandlers.set(view, handler);
}

/** Shows the view named by the URL; `focus` moves keyboard focus to its heading (after a tap on a tab). */
export function showCurrentView(focus = false): void {
  const view = currentView();
  for (const section of document.querySelectorAll<HTMLElement>('section.view')) section.hidden = section.dataset.view !== view;
  for (const tab of document.querySelectorAll<HTMLAnchorElement>('#tabs a[data-view]')) {
    if (tab.dataset.view === view) tab.setAttribute('aria-current', 'page');
    else tab.removeAttribute('aria-current');
  }
  if (focus) document.querySelector<HTMLElement>(`section.view[data-view="${view}"] h1`)?.focus({ preventScroll: true });
  if (view !== current) window.scrollTo(0, 0);
  current = view;
  shownHandlers.get(view)?.();
}

export function startRouter(): void {
  window.addEventListener('hashchange', () => showCurrentView(true));
  // A message is about what was just done; moving to another section leaves it behind.
  for (const tab of document.querySelectorAll<HTMLAnchorElement>('#tabs a[data-view]')) tab.addEventListener('click', clearMessage);
}

export const isShown = (view: View): boolean => current === view && !document.hidden;
