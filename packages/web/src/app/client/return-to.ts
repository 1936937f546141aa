// Where the app sends a person once they are signed in, when a page of this service sent them here to
// sign in first (`/app?next=...`). Only the consent pages qualify (an operator's at /connect, an app's
// at /oidc/authorize), and only as a path on this origin: anything else in `next` is ignored, so a
// crafted link cannot make the app an open redirect.

const CONSENT_PATHS = ['/connect?', '/oidc/authorize?'] as const;

/** The page to go back to after sign-in, or null. `search` is `location.search`. */
export function returnTarget(search: string): string | null {
  const next = new URLSearchParams(search).get('next');
  if (next === null || !CONSENT_PATHS.some((p) => next.startsWith(p)) || /[\\\s]/.test(next)) return null;
  return next;
}

/** The sign-in link for a page at `pathAndQuery` of this origin. */
export const signInLink = (pathAndQuery: string): string => `/app?${new URLSearchParams({ next: pathAndQuery }).toString()}`;
