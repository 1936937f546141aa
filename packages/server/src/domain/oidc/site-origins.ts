/**
 * Which sites a client's verification covers (decisions §18): every distinct origin (scheme, host,
 * port) of its redirect URIs, since a sign-in's consent card names the site it redirects to. A
 * development redirect (http: loopback) is left out unless OUTBOUND_ALLOW_LOOPBACK is on: nothing
 * outside the owner's machine can prove who runs it, so sign-ins to it always show "unverified site".
 */
import type { OutboundPolicy } from '../../outbound/types.ts';
import type { OidcClientRecord } from '../../store/ports/index.ts';
import { isDevelopmentRedirect } from './client-rules.ts';

export const VERIFICATION_PATH = '/.well-known/service-site.txt';

export const verificationUrl = (origin: string): string => `${origin}${VERIFICATION_PATH}`;

/** The line the site's file must hold, on a line of its own. */
export const verificationLine = (clientId: string, token: string): string => `mandate-client=${clientId}:${token}`;

/** Every distinct origin of the redirect URIs, in order of first appearance. */
export function allOrigins(redirectUris: readonly string[]): string[] {
  return [...new Set(redirectUris.map((u) => new URL(u).origin))];
}

/** The origins a verification checks under `policy`. */
export function siteOrigins(redirectUris: readonly string[], policy: OutboundPolicy): string[] {
  const checked = redirectUris.map((u) => new URL(u)).filter((u) => policy.allowLoopback || !isDevelopmentRedirect(u));
  return [...new Set(checked.map((u) => u.origin))];
}

/** Verified: there is a site to check and every one of them held the line at the last check. */
export function isClientVerified(client: OidcClientRecord, policy: OutboundPolicy): boolean {
  const origins = siteOrigins(client.redirectUris, policy);
  return origins.length > 0 && origins.every((o) => client.verifiedOrigins.includes(o));
}

/** Whether a sign-in redirecting to `redirectUri` goes to a verified site (for the consent card). */
export function isRedirectVerified(client: { verifiedOrigins: readonly string[] }, redirectUri: string): boolean {
  return client.verifiedOrigins.includes(new URL(redirectUri).origin);
}
