// Coming back from an identity provider: the service's callback sends the browser to
// /app#<view>?oauth=<outcome>&provider=<name>[&reason=…&detail=…]. The outcome is taken out of the
// address at once (a reload must not say it again), the view stays, and the app says how it went.
import { show } from '../message.ts';

export interface IdentityReturn {
  outcome: string;
  provider: string;
  detail: string | null;
}

/** Reads and removes the outcome from the fragment; null when there is none. */
export function takeIdentityReturn(): IdentityReturn | null {
  const hash = location.hash;
  const at = hash.indexOf('?');
  if (at < 0) return null;
  const q = new URLSearchParams(hash.slice(at + 1));
  const outcome = q.get('oauth');
  history.replaceState(null, '', `${location.pathname}${location.search}${hash.slice(0, at)}`);
  if (!outcome) return null;
  return { outcome, provider: q.get('provider') ?? '', detail: q.get('detail') };
}

/** Says how it went, naming the provider by its label (`labelOf`: from the loaded list). */
export function sayIdentityReturn(r: IdentityReturn | null, labelOf: (name: string) => string): void {
  if (!r) return;
  const label = labelOf(r.provider);
  if (r.outcome === 'linked') show(`${label} is linked: you can now sign in and approve access requests with it.`, 'ok');
  else if (r.outcome === 'signed_in') show(`Signed in with ${label}.`, 'ok');
  else if (r.outcome === 'approved') show(`Approved with ${label}.`, 'ok');
  else show(r.detail || `${label} did not sign you in. Nothing changed.`, 'error');
}
