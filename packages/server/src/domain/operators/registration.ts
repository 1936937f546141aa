/**
 * What an operator registration may hold (decisions §17), as pure checks that throw a 400 naming the
 * field and what to send instead. No I/O: the outbound policy is passed in.
 */
import type { OutboundPolicy } from '../../outbound/types.ts';
import type { OperatorBrowser } from '../../store/ports/index.ts';
import { badRequest } from '../errors.ts';
import { checkRedirectUris } from '../oidc/client-rules.ts';
import { VERIFICATION_PATH } from '../oidc/site-origins.ts';
import { outboundUrlProblem } from '../../outbound/url-policy.ts';
import { unreadableProblem } from '../readable-text.ts';

export const OPERATOR_NAME_MAX = 80;
/** Operators one person may register: a company needs one or a few; more is noise for the admin. */
export const MAX_OPERATORS_PER_PERSON = 10;
export const OPERATOR_BROWSERS: readonly OperatorBrowser[] = ['operator', 'user'];

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** The name people see on the consent page: trimmed, 1 to 80 characters, nothing unreadable. */
export function operatorName(raw: string): string {
  const name = raw.trim();
  if (name.length === 0 || name.length > OPERATOR_NAME_MAX) throw badRequest(`name must be 1 to ${OPERATOR_NAME_MAX} characters long (people see it when they connect the operator)`);
  if (CONTROL.test(name)) throw badRequest('name must not contain control characters');
  const hidden = unreadableProblem('name', name);
  if (hidden !== null) throw badRequest(hidden);
  return name;
}

export function operatorBrowser(raw: string): OperatorBrowser {
  const browser = OPERATOR_BROWSERS.find((b) => b === raw);
  if (browser === undefined) throw badRequest('browser must be "operator" (the agents\' browser runs on your computers) or "user" (on the user\'s own machine)');
  return browser;
}

/**
 * 1 to 10 redirect URIs, each as an OIDC client's (absolute, no fragment, no wildcard, no user
 * name, listed once), all on ONE origin: the operator's domain, whose verification file is fetched
 * with their scheme and port. https:, or http: on loopback only while OUTBOUND_ALLOW_LOOPBACK is on
 * (development and tests), since the domain must be verifiable through the outbound guard (§24).
 * Answers the origin.
 */
export function operatorOrigin(redirectUris: readonly string[], policy: OutboundPolicy): URL {
  checkRedirectUris(redirectUris);
  const urls = redirectUris.map((u) => new URL(u));
  const first = urls[0] as URL;
  urls.forEach((url, i) => {
    if (url.protocol === 'http:' && !policy.allowLoopback) {
      throw badRequest(`redirect_uris[${i}] must be an https: URL (http: on this machine only where the service runs with OUTBOUND_ALLOW_LOOPBACK, for development)`);
    }
    if (url.origin !== first.origin) {
      throw badRequest(`redirect_uris[${i}] is on ${url.origin}, redirect_uris[0] on ${first.origin}: all redirect URIs must be on one host (your domain), with the same scheme and port`);
    }
  });
  // The verification file must be fetchable through the outbound guard (§24): an address it refuses
  // by its text alone (a private or loopback IP, a localhost name) is refused here, while the person
  // registering is there to read why.
  const problem = outboundUrlProblem(`${first.origin}${VERIFICATION_PATH}`, policy, 'the domain of redirect_uris');
  if (problem !== null) throw badRequest(`${problem}: the service must be able to fetch ${first.origin}${VERIFICATION_PATH} to verify it`);
  return new URL(first.origin);
}
