// One view at a time, chosen by the URL fragment (#requests, #agents, ...), so the back button
// and bookmarks work and nothing needs a server route beyond /app. A view may take one parameter
// after a slash: #requests/t_abc (a notification's link) opens Requests on that request.
import { clearMessage } from './message.ts';

export const VIEWS = ['requests', 'agents', 'access', 'activity', 'account', 'notifications', 'sites'] as const;
export type View = (typeof VIEWS)[number];

/** Views opened from inside another view, not from a tab: the tab they belong to stays marked. */
const TAB_OF: Partial<Record<View, View>> = { sites: 'account' };

const DEFAULT_VIEW: View = 'requests';
const shownHandlers = new Map<View, (param: string | null) => void>();
let current: View | null = null;

const isView = (v: string): v is View => (VIEWS as readonly string[]).includes(v);

/** The view and its parameter named by a fragment ("#requests/t_abc"); unknown views are the default one. */
export function parseRoute(hash: string): { view: View; param: string | null } {
  // A `?…` tail carries a one-time outcome (views/identity-return.ts); it does not change the view.
  const match = /^#?([a-z]+)(?:\/([A-Za-z0-9_-]{1,200}))?(?:\?.*)?$/.exec(hash);
  const name = match?.[1] ?? '';
  if (!match || !isView(name)) return { view: DEFAULT_VIEW, param: null };
  return { view: name, param: match[2] ?? null };
}

/** Called each time the view is shown (load its data); `param` is what followed the slash, if anything. */
export function onShown(view: View, handler: (param: string | null) => void): void {
  shownHandlers.set(view, handler);
}

/** The links that open views: the tabs and the bell. */
const viewLinks = (): NodeListOf<HTMLAnchorElement> => document.querySelectorAll<HTMLAnchorElement>('#tabs a[data-view], #bell[data-view]');

/** Shows the view named by the URL; `focus` moves keyboard focus to its heading (after a tap on a tab). */
export function showCurrentView(focus = false): void {
  const { view, param } = parseRoute(location.hash);
  for (const section of document.querySelectorAll<HTMLElement>('section.view')) section.hidden = section.dataset.view !== view;
  const tab = TAB_OF[view] ?? view;
  for (const link of viewLinks()) {
    if (link.dataset.view === tab) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  // A request named in the URL gets the focus itself (requests.ts), not the heading.
  if (focus && !param) document.querySelector<HTMLElement>(`section.view[data-view="${view}"] h1`)?.focus({ preventScroll: true });
  if (view !== current) window.scrollTo(0, 0);
  current = view;
  shownHandlers.get(view)?.(param);
}

export function startRouter(): void {
  window.addEventListener('hashchange', () => showCurrentView(true));
  // A message is about what was just done; moving to another section leaves it behind.
  for (const link of viewLinks()) link.addEventListener('click', clearMessage);
}

export const isShown = (view: View): boolean => current === view && !document.hidden;
