/**
 * One check of a site's verification file (decisions §18, §24): fetch it through the outbound guard
 * (no redirects, 5 s, 64 kB) and look for the client's line. Stateless: the caller stores the result.
 */
import { OutboundError, type OutboundFetch } from '../../outbound/types.ts';

export type SiteCheck =
  | { url: string; ok: true }
  /** `found`: the `mandate-client=` lines the file held (a few, shortened), to compare with the one expected. */
  | { url: string; ok: false; problem: string; found: string[] };

const MAX_FOUND = 5;
const MAX_QUOTE = 200;

const quote = (text: string): string => (text.length > MAX_QUOTE ? `${text.slice(0, MAX_QUOTE)}…` : text);

/** Lines, each trimmed (a BOM, CR and surrounding spaces are not the site's intent). */
const linesOf = (body: Buffer): string[] => body.toString('utf8').split('\n').map((l) => l.trim());

/** Who publishes lines in the file: OIDC clients (`mandate-client=`) or operators (`mandate-operator=`, decisions §17). */
export interface LineKind {
  key: string;
  /** "clients" or "operators", for messages. */
  others: string;
}

export const CLIENT_LINES: LineKind = { key: 'mandate-client', others: 'clients' };

function missingLine(url: string, lines: string[], id: string, kind: LineKind, size: number): SiteCheck {
  const ours = lines.filter((l) => l.startsWith(`${kind.key}=${id}:`));
  const any = lines.filter((l) => l.startsWith(`${kind.key}=`));
  const found = (ours.length > 0 ? ours : any).slice(0, MAX_FOUND).map(quote);
  let problem: string;
  if (ours.length > 0) problem = `${url} has a line for ${id} but with another token (found ${found.join(', ')})`;
  else if (any.length > 0) problem = `${url} has no line for ${id}, only for other ${kind.others} (found ${found.join(', ')})`;
  else problem = `${url} was fetched (status 200, ${size} bytes) but holds no ${kind.key}= line`;
  return { url, ok: false, problem, found };
}

/**
 * Fetches `url` and looks for `line` on a line of its own; `id` is whose line it is (a client or an
 * operator, as `kind` says). Never throws for anything the site does.
 */
export async function checkSiteFile(fetch: OutboundFetch, url: string, line: string, id: string, kind: LineKind = CLIENT_LINES): Promise<SiteCheck> {
  let status: number;
  let headers: Record<string, string>;
  let body: Buffer;
  try {
    ({ status, headers, body } = await fetch(url, { method: 'GET', headers: { accept: 'text/plain' } }));
  } catch (error) {
    if (!(error instanceof OutboundError)) throw error;
    return { url, ok: false, problem: `could not fetch ${url}: ${error.message}`, found: [] };
  }
  if (status >= 300 && status < 400) {
    const to = headers['location'] ? ` to ${quote(headers['location'])}` : '';
    return { url, ok: false, problem: `${url} answered ${status}, a redirect${to}; redirects are not followed, so serve the file at exactly this address`, found: [] };
  }
  if (status === 404 || status === 410) return { url, ok: false, problem: `${url} answered ${status}: there is no file there yet`, found: [] };
  if (status !== 200) return { url, ok: false, problem: `${url} answered ${status}; it must answer 200 with the file`, found: [] };
  const lines = linesOf(body);
  return lines.includes(line) ? { url, ok: true } : missingLine(url, lines, id, kind, body.length);
}
