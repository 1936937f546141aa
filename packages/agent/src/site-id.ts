import { InvalidInputError } from './client/errors.ts';
import { parseHttpUrl } from './http-url.ts';

// The service's rule for a site id (docs/reference/api.md "Access request"): a lower-case host name
// of dot-separated labels, optionally with :port. Checked here too because the SDK also uses the
// site id as a file name for its state.
const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const SITE_PATTERN = new RegExp(`^${LABEL}(?:\\.${LABEL})*(?::[0-9]{1,5})?$`);

/** The canonical (lower-case) site id, or `InvalidInputError` saying what a site id looks like. */
export function normalizeSiteId(site: string): string {
  const s = site.toLowerCase();
  const port = /:([0-9]+)$/.exec(s)?.[1];
  if (s.length < 1 || s.length > 253 || !SITE_PATTERN.test(s) || (port !== undefined && (Number(port) < 1 || Number(port) > 65535))) {
    throw new InvalidInputError(`invalid site ${JSON.stringify(site)}: use the site's host name, optionally with :port (for example shop.example.com or localhost:3000)`);
  }
  return s;
}

/** The site id of a URL: its host, with the port only when it is not the scheme's default. */
export function siteIdOfUrl(url: string): string {
  const parsed = parseHttpUrl(url, 'only http and https URLs can be called', (message) => new InvalidInputError(message));
  return normalizeSiteId(parsed.host);
}
