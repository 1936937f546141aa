// Coming back from an identity provider: the service's callback sends the browser to
// /app#<view>?oauth=<outcome>&provider=<name>[&reason=…]. The outcome is taken out of the address at
// once (a reload must not say it again), the view stays, and the app says how it went in its own
// words, by `reason`: it never shows the `detail` of the address, which a crafted link could fill
// with any text.
import { show } from '../message.ts';

export interface IdentityReturn {
  outcome: string;
  provider: string;
  reason: string;
}

/** Reads and removes the outcome from the fragment (and, for an approval, the request's id); null when there is none. */
export function takeIdentityReturn(): IdentityReturn | null {
  const hash = location.hash;
  const at = hash.indexOf('?');
  if (at < 0) return null;
  const q = new URLSearchParams(hash.slice(at + 1));
  const outcome = q.get('oauth');
  // Approved with a provider, the request is answered: its view opens without looking for its card,
  // which a refresh would otherwise report gone ("no longer waiting"), over "Approved with …".
  const route = outcome === 'approved' ? hash.slice(0, at).replace(/\/.*$/, '') : hash.slice(0, at);
  history.replaceState(null, '', `${location.pathname}${location.search}${route}`);
  if (!outcome) return null;
  return { outcome, provider: q.get('provider') ?? '', reason: q.get('reason') ?? '' };
}

/** What a refusal says, by its reason (the route's list); `l` is the provider's label. */
export function refusalText(reason: string, l: string): string {
  const L = l.charAt(0).toUpperCase() + l.slice(1);
  switch (reason) {
    case 'unknown_provider': return 'That sign-in provider is not set up on this service.';
    case 'rate_limited': return 'Too many attempts. Wait a few minutes and try again.';
    case 'passkey_session_needed': return `To link or unlink ${l}, first sign in with one of your passkeys: a password alone cannot change how you sign in.`;
    case 'provider_taken': return `Another ${l} account is linked to yours already. Unlink it first to link this one.`;
    case 'session_changed': return `This browser is no longer signed in as the account that started linking ${l}. Sign in and start again.`;
    case 'bad_state': return `This ${l} sign-in was unknown, already used or too old. Nothing changed; start again.`;
    case 'other_browser': return `This ${l} sign-in was started in another browser. Nothing changed; start it again here.`;
    case 'access_denied': return `${L} answered access_denied: you cancelled, or ${l} refused. Nothing changed.`;
    case 'issuer_error': return `${L} could not be reached, or answered with an error. Nothing changed; try again.`;
    case 'invalid_response': return `${L}'s answer could not be verified. Nothing changed; try again.`;
    case 'not_linked': return `This ${l} account is not linked to a Mandate account. Sign in with your password or a passkey, then link ${l} under Account. (No account is made or matched by email.)`;
    case 'linked_elsewhere': return `This ${l} account is linked to another Mandate account. Unlink it there first.`;
    case 'wrong_owner': return `The ${l} account you signed in with is not the one linked to this account. Nothing was approved.`;
    case 'stale_sign_in': return `${L} did not ask you to sign in again just now. Nothing was approved; try again.`;
    case 'not_approved': return 'Not approved: the request was answered or expired meanwhile, or cannot be approved this way. Approve it with your passkey.';
    default: return `${L} did not sign you in. Nothing changed.`;
  }
}

/** Says how it went, naming the provider by its label (`labelOf`: from the loaded list). */
export function sayIdentityReturn(r: IdentityReturn | null, labelOf: (name: string) => string | null): void {
  if (!r) return;
  const label = labelOf(r.provider);
  if (r.outcome !== 'refused' && label !== null) {
    if (r.outcome === 'linked') return show(`${label} is linked: you can now sign in and approve access requests with it.`, 'ok');
    if (r.outcome === 'signed_in') return show(`Signed in with ${label}.`, 'ok');
    if (r.outcome === 'approved') return show(`Approved with ${label}.`, 'ok');
  }
  show(refusalText(r.reason, label ?? 'the sign-in provider'), 'error');
}
