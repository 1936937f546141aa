/**
 * What `?site=` of the readiness check accepts (decisions §22): a site id as agents and sites use it
 * (a lower-case host name, optionally with :port), or an http(s) address, of which only the host
 * counts. Anything else is a 400 that says what a site looks like.
 */
import { badRequest } from '../errors.ts';

const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
// The service's rule for a site id (interface.md, access requests), as the agent SDK's site-id.ts.
const SITE = new RegExp(`^${LABEL}(?:\\.${LABEL})*(?::[0-9]{1,5})?$`);

export const SITE_HINT = 'give the site as its host name, such as shop.example or shop.example:8443, or as its address, such as https://shop.example/';

/** The site id of `input`, or a 400. */
export function parseSiteInput(input: string): string {
  const text = input.trim();
  if (text === '') throw badRequest(`site is empty: ${SITE_HINT}`);
  if (text.length > 2048) throw badRequest(`site is too long: ${SITE_HINT}`);
  let host = text.toLowerCase();
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw badRequest(`site ${JSON.stringify(text.slice(0, 100))} is not a valid address: ${SITE_HINT}`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw badRequest(`site must be an https address, not ${url.protocol}: ${SITE_HINT}`);
    if (url.username !== '' || url.password !== '') throw badRequest(`site must not carry a user name or password: ${SITE_HINT}`);
    host = url.host;
  }
  const port = /:([0-9]+)$/.exec(host)?.[1];
  if (host.length > 253 || !SITE.test(host) || (port !== undefined && (Number(port) < 1 || Number(port) > 65535))) {
    throw badRequest(`site ${JSON.stringify(text.slice(0, 100))} is not a host name: ${SITE_HINT}`);
  }
  // https://shop.example:443/ and shop.example:443 are the site shop.example.
  return host.endsWith(':443') ? host.slice(0, -4) : host;
}
