import { isIP } from 'node:net';

/**
 * Which `X-Forwarded-For` entries give the client address (decisions §25). Per-address limits
 * (sign-up, sign-in, ...) are only as good as this: a client that can choose its address gets a
 * fresh allowance per request.
 *
 * - `none` (default): the address of the TCP peer; `X-Forwarded-For` is ignored.
 * - `hops`: that many proxies stand in front, each appending the address it saw; the client is the
 *   entry that many places from the right. Entries further left are whatever the client sent.
 *   Only safe when nobody can reach the service except through those proxies.
 * - `proxies`: only a peer in the list (addresses, CIDR ranges, `loopback`, `linklocal`,
 *   `uniquelocal`) is believed; walking from the right, the first address that is not a listed
 *   proxy is the client. A client that reaches the service directly cannot forge anything.
 * - `all`: the left-most entry, which any client can forge. Kept as an explicit opt-in for old
 *   deployments; announced at start as unsafe.
 */
export type TrustProxy = { kind: 'none' } | { kind: 'all' } | { kind: 'hops'; hops: number } | { kind: 'proxies'; proxies: string[] };

export const MAX_PROXY_HOPS = 10;
const NAMED_RANGES = ['loopback', 'linklocal', 'uniquelocal'];
const USAGE = 'TRUST_PROXY takes false, the number of proxies in front (1, 2, ...), or a comma-separated list of proxy addresses or CIDR ranges (e.g. 10.0.0.0/8,loopback)';

/** Parses TRUST_PROXY; problems are pushed to `problems` (and `none` returned). */
export function parseTrustProxy(raw: string | undefined, problems: string[]): TrustProxy {
  if (raw === undefined) return { kind: 'none' };
  const lower = raw.toLowerCase();
  if (['false', 'no', 'off'].includes(lower)) return { kind: 'none' };
  if (['true', 'yes', 'on'].includes(lower)) return { kind: 'all' };
  if (/^\d+$/.test(raw)) {
    const hops = Number(raw);
    if (hops === 0) return { kind: 'none' };
    if (hops <= MAX_PROXY_HOPS) return { kind: 'hops', hops };
    problems.push(`TRUST_PROXY: ${raw} proxies is more than ${MAX_PROXY_HOPS}; ${USAGE}`);
    return { kind: 'none' };
  }
  const proxies = raw.split(',').map((p) => p.trim());
  const bad = proxies.filter((p) => !isProxyAddress(p));
  if (bad.length > 0) {
    problems.push(`TRUST_PROXY: ${bad.map((b) => `"${b}"`).join(', ')} ${bad.length === 1 ? 'is' : 'are'} not an IP address, a CIDR range or one of ${NAMED_RANGES.join(', ')}; ${USAGE}`);
    return { kind: 'none' };
  }
  return { kind: 'proxies', proxies };
}

function isProxyAddress(entry: string): boolean {
  if (NAMED_RANGES.includes(entry)) return true;
  const [address, prefix, ...rest] = entry.split('/');
  if (rest.length > 0 || address === undefined) return false;
  const family = isIP(address);
  if (family === 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

/** Fastify's `trustProxy` option for the setting. */
export function fastifyTrustProxy(setting: TrustProxy): boolean | string[] | ((address: string, hop: number) => boolean) {
  switch (setting.kind) {
    case 'none':
      return false;
    case 'all':
      return true;
    // Fastify treats a bare number as "trust nothing" (it cannot check the peer); hop counting is
    // what the operator asked for, so it is spelled out: the peer is hop 0, the right-most entry hop 1.
    case 'hops':
      return (_address, hop) => hop < setting.hops;
    case 'proxies':
      return setting.proxies;
  }
}
