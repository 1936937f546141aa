import type { SiteState } from '../state/state-store.ts';

/**
 * When to renew a pass: a minute before it expires, so that a request signed now still arrives
 * with a live pass (and DPoP proofs may be up to 120 s apart from the site's clock anyway). A pass
 * shorter-lived than two minutes (its grant ends sooner) is renewed after half its life.
 */
export const REFRESH_MARGIN_MS = 60_000;

export function refreshDueAt(state: Pick<SiteState, 'issuedAt' | 'expiresAt'>): number {
  const lifetime = Math.max(0, state.expiresAt - state.issuedAt);
  return state.expiresAt - Math.min(REFRESH_MARGIN_MS, lifetime / 2);
}

export function needsRefresh(state: Pick<SiteState, 'issuedAt' | 'expiresAt'>, now: number): boolean {
  return now >= refreshDueAt(state);
}
