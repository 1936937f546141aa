import { ProtocolError } from './errors.ts';
import { Memo } from './memo.ts';

/**
 * Canonical form of a DPoP `htu` / request URL (decisions.md §4): scheme and host lower-cased,
 * default port dropped, query, fragment and userinfo dropped, path kept (so `/a` != `/a/`).
 *
 * The WHATWG URL parser does the lower-casing and default-port removal, and resolves dot
 * segments the same way for both sides, so the proof's htu and the request URL compare on equal
 * terms. Only http and https are meaningful request targets; anything else is refused.
 */
export function normalizeHtu(url: string): string {
  return parsedHtu(url).htu;
}

/** The lower-cased host name (no port) of a request URL that normalizeHtu accepts. */
export function htuHostname(url: string): string {
  return parsedHtu(url).hostname;
}

type ParsedHtu = { htu: string; hostname: string };

/**
 * A verifier sees the same few URLs (a site's endpoints, and the same in every proof) on every
 * request, and the URL parser costs more than the rest of the comparison: the last answers are kept,
 * keyed by the exact input string. Only accepted URLs are kept, at most 1024.
 */
const remembered = new Memo<ParsedHtu>(1024);

function parsedHtu(url: string): ParsedHtu {
  if (typeof url !== 'string' || url.length === 0 || url.length > 8192) {
    throw new ProtocolError('invalid_request', 'the URL is missing or too long');
  }
  const hit = remembered.get(url);
  if (hit !== undefined) return hit;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ProtocolError('invalid_request', 'the URL cannot be parsed');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ProtocolError('invalid_request', 'the URL must be http or https');
  }
  if (parsed.hostname === '') {
    throw new ProtocolError('invalid_request', 'the URL has no host');
  }
  // `host` carries the port only when it is not the scheme's default.
  return remembered.set(url, { htu: `${parsed.protocol}//${parsed.host}${parsed.pathname}`, hostname: parsed.hostname });
}

/**
 * Does a proof's htu designate the request URL? The request URL comes from the caller, so a bad
 * one throws ProtocolError('invalid_request'); a bad htu from the proof is simply no match.
 */
export function htuMatches(proofHtu: string, requestUrl: string): boolean {
  return htuIs(proofHtu, normalizeHtu(requestUrl));
}

/** htuMatches for a request URL the caller has already normalized (`expected`). */
export function htuIs(proofHtu: string, expected: string): boolean {
  try {
    return normalizeHtu(proofHtu) === expected;
  } catch {
    return false;
  }
}
