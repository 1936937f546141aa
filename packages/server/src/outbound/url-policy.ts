/**
 * The synchronous half of the outbound guard (decisions §24): whether a URL someone gave us may be
 * fetched at all. Run when the address is registered (so the owner hears about it as a 400) and again
 * before every fetch. Hostnames are judged again after resolution and on the connected socket
 * (guarded-fetch.ts); here only what the text alone decides.
 */
import { isIP } from 'node:net';
import { addressProblem } from './address-policy.ts';
import type { OutboundPolicy, OutboundRefusal } from './types.ts';

export const OUTBOUND_URL_MAX_LENGTH = 2048;

export interface OutboundUrlRefusal {
  reason: Extract<OutboundRefusal, 'url' | 'scheme' | 'address'>;
  /** A sentence the caller can show as a 400 `detail`. */
  message: string;
}

/** `localhost` and its subdomains resolve to loopback by rule (RFC 6761), whatever DNS says. */
function isLocalhostName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/**
 * Why `url` may not be fetched, or null when it may. `subject` names the address in the message,
 * e.g. "push endpoint" gives "push endpoint must be an https: URL".
 */
export function checkOutboundUrl(url: string, policy: OutboundPolicy, subject = 'the URL'): OutboundUrlRefusal | null {
  if (url.length > OUTBOUND_URL_MAX_LENGTH) {
    return { reason: 'url', message: `${subject} must be at most ${OUTBOUND_URL_MAX_LENGTH} characters long` };
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { reason: 'url', message: `${subject} must be a complete URL such as https://example.com/path` };
  }
  const schemeAllowed = parsed.protocol === 'https:' || (policy.allowLoopback && parsed.protocol === 'http:');
  if (!schemeAllowed) {
    const expected = policy.allowLoopback ? 'an https: or http:' : 'an https:';
    return { reason: 'scheme', message: `${subject} must be ${expected} URL` };
  }
  if (parsed.username !== '' || parsed.password !== '') {
    return { reason: 'url', message: `${subject} must not contain a user name or password` };
  }
  // URL has already normalised IPv4 shorthands (0x7f.1, 2130706433) to dotted quads.
  const host = parsed.hostname.startsWith('[') ? parsed.hostname.slice(1, -1) : parsed.hostname;
  if (isIP(host) !== 0) {
    const problem = addressProblem(host, policy);
    if (problem !== null) return { reason: 'address', message: `${subject} must point to a public address: ${problem}` };
  } else if (isLocalhostName(host) && !policy.allowLoopback) {
    return { reason: 'address', message: `${subject} must point to a public address, not ${host}` };
  }
  return null;
}

/** The refusal's message alone, for validating an address someone registers. */
export function outboundUrlProblem(url: string, policy: OutboundPolicy, subject = 'the URL'): string | null {
  return checkOutboundUrl(url, policy, subject)?.message ?? null;
}
