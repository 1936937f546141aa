import type { VerifierConfig } from './config.ts';
import { header } from './request.ts';
import type { MandateRequest } from './types.ts';

export type PublicUrl = { ok: true; url: string } | { ok: false; description: string };

/** The path and query of a request target: origin-form as is, absolute-form reduced to its path. */
function pathOf(target: string): string | undefined {
  if (target.startsWith('/')) return target;
  if (/^https?:\/\//i.test(target)) {
    try {
      const u = new URL(target);
      return u.pathname + u.search;
    } catch {
      return undefined;
    }
  }
  return undefined; // `*`, authority-form, garbage
}

/** First value of a possibly comma-separated forwarded header (the one the first proxy wrote). */
function forwarded(request: MandateRequest, name: string): string | undefined {
  const h = header(request.headers, name);
  if (h.kind !== 'one') return undefined;
  const first = h.value.split(',')[0]?.trim();
  return first === '' ? undefined : first;
}

/** A host[:port] with nothing that could move the URL's authority or path. */
const HOST_PATTERN = /^(\[[0-9a-fA-F:.]+\]|[^\s/\\?#@[\]]+)(:\d{1,5})?$/;

/**
 * The full URL the agent's DPoP proof must sign (interface.md, site-side request contract): the
 * configured public base address plus the request path. Without a base address, the Host header,
 * overridden by X-Forwarded-Host / X-Forwarded-Proto only when `trustForwardedHeaders` is on.
 */
export function publicUrl(request: MandateRequest, config: Pick<VerifierConfig, 'publicBaseUrl' | 'trustForwardedHeaders'>): PublicUrl {
  if (typeof request.url !== 'string' || request.url.length > 8192) return { ok: false, description: 'the request URL is missing or too long' };
  const path = pathOf(request.url);
  if (path === undefined) return { ok: false, description: 'the request target is not a path' };
  if (config.publicBaseUrl !== undefined) return { ok: true, url: config.publicBaseUrl + path };

  const trust = config.trustForwardedHeaders;
  const hostHeader = header(request.headers, 'host');
  const host = (trust ? forwarded(request, 'x-forwarded-host') : undefined) ?? (hostHeader.kind === 'one' ? hostHeader.value : undefined);
  if (host === undefined || !HOST_PATTERN.test(host)) return { ok: false, description: 'the request has no usable Host header' };
  const proto = ((trust ? forwarded(request, 'x-forwarded-proto') : undefined) ?? (request.secure === true ? 'https' : 'http')).toLowerCase();
  if (proto !== 'http' && proto !== 'https') return { ok: false, description: 'X-Forwarded-Proto must be http or https' };
  return { ok: true, url: `${proto}://${host}${path}` };
}
