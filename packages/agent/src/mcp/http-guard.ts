import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** `MANDATE_MCP_TOKEN` must be at least this long (decisions §27). */
export const MIN_TOKEN_LENGTH = 32;

export type Refusal = { status: 401 | 403; error: string; detail: string };

/**
 * The checks of every request to `/mcp` before MCP sees it: the `Host` (and `Origin`, when a browser
 * sends one) must name the listen address or an `--allowed-host` (a web page that rebinds its DNS
 * name to 127.0.0.1 still sends its own name), then `Authorization: Bearer` must carry the token.
 */
export class HttpGuard {
  private readonly tokenDigest: Buffer;
  private readonly hosts: ReadonlySet<string>;

  constructor(token: string, listenHost: string, allowedHosts: readonly string[]) {
    this.tokenDigest = digest(token);
    const loopback = isLoopback(listenHost) ? ['localhost', '127.0.0.1', '[::1]'] : [];
    this.hosts = new Set([listenHost, ...loopback, ...allowedHosts].map((h) => hostName(h)));
  }

  check(req: IncomingMessage): Refusal | undefined {
    const host = req.headers.host;
    if (!host || !this.hosts.has(hostName(host))) return { status: 403, error: 'host_not_allowed', detail: 'the Host header names neither the listen address nor an --allowed-host' };
    const origin = req.headers.origin;
    if (origin !== undefined && !this.originAllowed(origin)) return { status: 403, error: 'origin_not_allowed', detail: 'the Origin header names neither the listen address nor an --allowed-host' };
    const auth = req.headers.authorization ?? '';
    const match = /^Bearer +(\S+)$/i.exec(auth);
    // Digests have one length whatever was sent, so the comparison takes the same time for every guess.
    if (!match?.[1] || !timingSafeEqual(digest(match[1]), this.tokenDigest)) return { status: 401, error: 'invalid_token', detail: 'send Authorization: Bearer <MANDATE_MCP_TOKEN>' };
    return undefined;
  }

  private originAllowed(origin: string): boolean {
    try {
      const url = new URL(origin);
      return (url.protocol === 'http:' || url.protocol === 'https:') && this.hosts.has(hostName(url.host));
    } catch {
      return false; // "null" (a sandboxed page, a file) and anything unparsable
    }
  }
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s, 'utf8').digest();
}

/** "Example.COM:8080" -> "example.com"; "[::1]:80" -> "[::1]"; a bare IPv6 address gets its brackets. */
export function hostName(hostPort: string): string {
  const h = hostPort.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(0, h.indexOf(']') + 1);
  if ((h.match(/:/g) ?? []).length > 1) return `[${h}]`;
  return h.split(':')[0] ?? '';
}

function isLoopback(host: string): boolean {
  const h = hostName(host);
  return h === 'localhost' || h === '[::1]' || /^127\./.test(h);
}
