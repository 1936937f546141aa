/**
 * A pasted HTTP/1.1 request (what someone copied from a log or a proxy): the request line and the
 * header fields up to the first empty line; the body is not needed. Repeated fields are joined with
 * ", " as RFC 9421 §2.1 asks; obs-fold continuation lines join their field.
 */
import { badRequest } from '../errors.ts';

export interface RawRequest {
  method: string;
  /** The request target as written: origin form (`/path?q`) or absolute form (`https://host/path`). */
  target: string;
  /** Lower-case names. */
  headers: Map<string, string>;
  /** The request's `@authority`: the absolute target's host, else the Host field, lower-cased. */
  authority: string;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export function parseRawRequest(text: string): RawRequest {
  const lines = text.replace(/^\s+/, '').split(/\r?\n/);
  const first = lines.shift() ?? '';
  const m = /^([A-Z]+) (\S+) HTTP\/\d(?:\.\d)?$/.exec(first.trim());
  if (!m) throw badRequest('request: the first line must be a request line such as "GET /path HTTP/1.1"');
  const [, method, target] = m as unknown as [string, string, string];
  const fields: [string, string][] = [];
  for (const line of lines) {
    if (line.trim() === '') break;
    if (/^[ \t]/.test(line)) {
      const last = fields.at(-1);
      if (last === undefined) throw badRequest('request: a continuation line comes before any header field');
      last[1] = `${last[1]} ${line.trim()}`;
      continue;
    }
    const colon = line.indexOf(':');
    const name = line.slice(0, colon);
    if (colon <= 0 || !TOKEN.test(name)) throw badRequest(`request: "${line.slice(0, 40)}" is not a header field (name: value)`);
    fields.push([name.toLowerCase(), line.slice(colon + 1).trim()]);
  }
  const headers = new Map<string, string>();
  for (const [name, value] of fields) headers.set(name, headers.has(name) ? `${headers.get(name)}, ${value}` : value);
  let authority = headers.get('host')?.toLowerCase();
  if (/^https?:\/\//i.test(target)) {
    try {
      authority = new URL(target).host.toLowerCase();
    } catch {
      throw badRequest('request: the request target is not a valid URL');
    }
  }
  if (authority === undefined || authority === '') throw badRequest('request: a Host field (or an absolute request target) is needed for @authority');
  try {
    if (new URL(`https://${authority}/`).host !== authority.replace(/:443$/, '')) throw new Error('not a plain host');
  } catch {
    throw badRequest('request: the Host field must be a host name, optionally with a port');
  }
  // An explicit default port is not part of @authority (RFC 9421 §2.2.3).
  return { method, target, headers, authority: authority.replace(/:443$/, '') };
}
