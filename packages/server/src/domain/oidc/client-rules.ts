/**
 * What an OIDC client registration may hold (decisions §18), as pure checks that throw a 400 naming
 * the field and what to send instead. No I/O: the outbound policy is passed in.
 */
import type { OutboundPolicy } from '../../outbound/types.ts';
import { outboundUrlProblem } from '../../outbound/url-policy.ts';
import { badRequest } from '../errors.ts';
import { unreadableProblem } from '../readable-text.ts';

/** Enough for a few dozen sites per owner, few enough that listing them is one small read. */
export const MAX_CLIENTS_PER_OWNER = 50;
export const MAX_REDIRECT_URIS = 10;
export const MAX_REDIRECT_URI_LENGTH = 2000;
export const MAX_NAME_LENGTH = 100;

/**
 * Loopback hosts allowed with `http:` and any port, for development and native apps (OAuth 2.1
 * §8.4.2 and RFC 8252 §7.3: the redirect never leaves the machine). Exactly these spellings, as the
 * URL parser leaves them.
 */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

const HTTP_RULE = 'an https: URL (http: only for http://localhost, http://127.0.0.1 or http://[::1], any port, for development)';

/** Printable ASCII without spaces: what a redirect URI compared as a string should be made of. */
const PRINTABLE_ASCII = /^[\x21-\x7e]+$/;
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * Why `raw` cannot be a client's display name, or null. The name, trimmed: 1 to 100 characters, no
 * control characters, no format characters (the owner's card shows it: a bidi override or
 * zero-width character could disguise one site as another).
 */
export function clientNameProblem(raw: string, field = 'name'): string | null {
  const name = raw.trim();
  if (name.length === 0 || name.length > MAX_NAME_LENGTH) return `${field} must be 1 to ${MAX_NAME_LENGTH} characters long (it is what people see when their agent signs in there)`;
  if (CONTROL.test(name)) return `${field} must not contain control characters`;
  return unreadableProblem(field, name);
}

/** The display name, trimmed; 400 when it cannot be one. */
export function clientName(raw: string): string {
  const problem = clientNameProblem(raw);
  if (problem !== null) throw badRequest(problem);
  return raw.trim();
}

/** A development redirect: `http:` to a loopback host. It cannot be verified from outside. */
export function isDevelopmentRedirect(url: URL): boolean {
  return url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
}

function redirectUriProblem(uri: string): string | null {
  if (uri.length > MAX_REDIRECT_URI_LENGTH) return `is ${uri.length} characters long; at most ${MAX_REDIRECT_URI_LENGTH}`;
  if (!PRINTABLE_ASCII.test(uri)) return 'must be printable ASCII without spaces (percent-encode anything else)';
  // Checked on the text: the parser drops an empty fragment ("https://a.example/cb#").
  if (uri.includes('#')) return 'must not contain a fragment (#...): the code is added to the query';
  if (uri.includes('*')) return 'must not contain wildcards (*): register each redirect URI in full';
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'must be an absolute URL such as https://shop.example/callback';
  }
  if (url.protocol !== 'https:' && !isDevelopmentRedirect(url)) return `must be ${HTTP_RULE}`;
  if (url.username !== '' || url.password !== '') return 'must not contain a user name or password';
  return null;
}

/** Why these cannot be a client's redirect URIs, or null: 1 to 10 distinct absolute https: (or loopback http:) URIs, no fragment, no wildcard. */
export function redirectUrisProblem(uris: readonly string[]): string | null {
  if (uris.length < 1 || uris.length > MAX_REDIRECT_URIS) return `redirect_uris must hold 1 to ${MAX_REDIRECT_URIS} URIs (it holds ${uris.length})`;
  for (const [i, uri] of uris.entries()) {
    const problem = redirectUriProblem(uri);
    if (problem !== null) return `redirect_uris[${i}] ${problem}`;
    const first = uris.indexOf(uri);
    if (first !== i) return `redirect_uris[${i}] repeats redirect_uris[${first}]: list each URI once`;
  }
  return null;
}

export function checkRedirectUris(uris: readonly string[]): void {
  const problem = redirectUrisProblem(uris);
  if (problem !== null) throw badRequest(problem);
}

/** The back-channel logout URI is fetched by the service: the outbound guard's rules (§24) apply. */
export function checkBackchannelLogoutUri(uri: string, policy: OutboundPolicy): void {
  const problem = outboundUrlProblem(uri, policy, 'backchannel_logout_uri');
  if (problem !== null) throw badRequest(problem);
  if (uri.includes('#')) throw badRequest('backchannel_logout_uri must not contain a fragment (#...)');
}
