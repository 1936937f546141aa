// Where the app sends a person once they are signed in, when a page of this service sent them here to
// sign in first (`/app?next=...`). Only the consent page qualifies, and only as a path on this origin:
// anything else in `next` is ignored, so a crafted link cannot make the app an open redirect.

const CONSENT_PATH = '/connect?';

/** The page to go back to after sign-in, or null. `search` is `location.search`. */
export function returnTarget(search: string): string | null {
  const next = new URLSearchParams(search).get('next');
  if (next === null || !next.startsWith(CONSENT_PATH) || /[\\\s]/.test(next)) return null;
  return next;
}

/** The sign-in link for a page at `pathAndQuery` of this origin. */
export const signInLink = (pathAndQuery: string): string => `/app?${new URLSearchParams({ next: pathAndQuery }).toString()}`;
