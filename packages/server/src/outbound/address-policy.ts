/**
 * Which IP addresses the outbound guard may connect to (decisions §24): only public ones. Pure
 * functions over the textual address, hand-parsed so that every IPv6 spelling (compressed, with a
 * dotted IPv4 tail) is judged by its bits, and so that IPv4 embedded in IPv6 (mapped, NAT64, 6to4)
 * is judged as the IPv4 address it reaches.
 */
import type { OutboundPolicy } from './types.ts';

interface Ipv4Range {
  base: number;
  prefix: number;
  label: string;
}

const LOOPBACK = 'loopback';

function ipv4Range(dotted: string, prefix: number, label: string): Ipv4Range {
  const base = parseIpv4(dotted);
  if (base === null) throw new Error(`bad range ${dotted}`);
  return { base, prefix, label };
}

/** First match wins, so the broadcast address comes before the reserved 240/4 around it. */
const NON_PUBLIC_IPV4: readonly Ipv4Range[] = [
  ipv4Range('0.0.0.0', 8, '"this network"'),
  ipv4Range('10.0.0.0', 8, 'private'),
  ipv4Range('100.64.0.0', 10, 'shared CGNAT'),
  ipv4Range('127.0.0.0', 8, LOOPBACK),
  ipv4Range('169.254.0.0', 16, 'link-local'),
  ipv4Range('172.16.0.0', 12, 'private'),
  ipv4Range('192.0.0.0', 24, 'IETF protocol assignment'),
  ipv4Range('192.0.2.0', 24, 'documentation'),
  ipv4Range('192.168.0.0', 16, 'private'),
  ipv4Range('198.18.0.0', 15, 'benchmarking'),
  ipv4Range('198.51.100.0', 24, 'documentation'),
  ipv4Range('203.0.113.0', 24, 'documentation'),
  ipv4Range('224.0.0.0', 4, 'multicast'),
  ipv4Range('255.255.255.255', 32, 'broadcast'),
  ipv4Range('240.0.0.0', 4, 'reserved'),
];

/**
 * Strict dotted quad. Leading zeros are refused because some resolvers read them as octal
 * (010.0.0.1 = 8.0.0.1), which is exactly the kind of disagreement an attacker uses.
 */
export function parseIpv4(text: string): number | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let value = 0;
  for (const part of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part)) return null;
    const octet = Number(part);
    if (octet > 255) return null;
    value = value * 256 + octet;
  }
  return value;
}

export function formatIpv4(value: number): string {
  return [value >>> 24, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff].join('.');
}

/** The eight 16-bit groups of an IPv6 address, or null when the text is not one (zone ids refused). */
export function parseIpv6(text: string): number[] | null {
  if (text.includes('%')) return null;
  let body = text;
  const dottedTail: number[] = [];
  const lastColon = text.lastIndexOf(':');
  if (lastColon < 0) return null;
  // A dotted IPv4 may only stand in for the last 32 bits.
  if (text.slice(lastColon + 1).includes('.')) {
    const v4 = parseIpv4(text.slice(lastColon + 1));
    if (v4 === null) return null;
    dottedTail.push(v4 >>> 16, v4 & 0xffff);
    body = text.slice(0, lastColon + 1);
    if (!body.endsWith('::')) body = body.slice(0, -1);
  }
  const halves = body.split('::');
  if (halves.length > 2) return null;
  const head = hexGroups(halves[0] ?? '');
  if (head === null) return null;
  if (halves.length === 1) {
    const all = [...head, ...dottedTail];
    return all.length === 8 ? all : null;
  }
  const tail = hexGroups(halves[1] ?? '');
  if (tail === null) return null;
  const right = [...tail, ...dottedTail];
  const zeros = 8 - head.length - right.length;
  // `::` stands for at least one group of zeros.
  if (zeros < 1) return null;
  return [...head, ...new Array<number>(zeros).fill(0), ...right];
}

function hexGroups(text: string): number[] | null {
  if (text === '') return [];
  const groups: number[] = [];
  for (const part of text.split(':')) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(part)) return null;
    groups.push(parseInt(part, 16));
  }
  return groups;
}

function ipv4Label(value: number): string | null {
  for (const range of NON_PUBLIC_IPV4) {
    const mask = range.prefix === 0 ? 0 : (0xffffffff << (32 - range.prefix)) >>> 0;
    if (((value & mask) >>> 0) === range.base) return range.label;
  }
  return null;
}

function ipv4Problem(ip: string, value: number, allowLoopback: boolean): string | null {
  const label = ipv4Label(value);
  if (label === null || (label === LOOPBACK && allowLoopback)) return null;
  return `${ip} is not a public address (${label})`;
}

/** Judges the IPv4 address that an IPv6 form reaches; loopback stays refused unless `allowLoopback`. */
function embeddedProblem(ip: string, form: string, value: number, allowLoopback: boolean): string | null {
  const label = ipv4Label(value);
  if (label === null || (label === LOOPBACK && allowLoopback)) return null;
  return `${ip} is not a public address (${form} of ${formatIpv4(value)}, ${label})`;
}

function ipv6Problem(ip: string, g: number[], allowLoopback: boolean): string | null {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const low32 = ((g6 << 16) | g7) >>> 0;
  const refuse = (label: string): string => `${ip} is not a public address (${label})`;
  const zeroUpTo = (n: number): boolean => g.slice(0, n).every((x) => x === 0);

  if (zeroUpTo(8)) return refuse('unspecified');
  if (zeroUpTo(7) && g7 === 1) return allowLoopback ? null : refuse(LOOPBACK);
  if (zeroUpTo(5) && g5 === 0xffff) return embeddedProblem(ip, 'IPv4-mapped form', low32, allowLoopback);
  if (zeroUpTo(6)) return refuse('deprecated IPv4-compatible form');
  // NAT64 and 6to4 reach the embedded IPv4 through a gateway, never this host: no loopback allowance.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) {
    return embeddedProblem(ip, 'NAT64 form', low32, false);
  }
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 1) {
    // Local-use NAT64 (RFC 8215) may embed the IPv4 at several offsets; only the /96 one is unambiguous.
    if (g3 === 0 && g4 === 0 && g5 === 0) return embeddedProblem(ip, 'local-use NAT64 form', low32, false);
    return refuse('local-use NAT64 with an unrecognised layout');
  }
  if (g0 === 0x2002) return embeddedProblem(ip, '6to4 form', ((g1 << 16) | g2) >>> 0, false);
  if (g0 === 0x100 && g1 === 0 && g2 === 0 && g3 === 0) return refuse('discard-only');
  if ((g0 & 0xfe00) === 0xfc00) return refuse('unique local');
  if ((g0 & 0xffc0) === 0xfe80) return refuse('link-local');
  if ((g0 & 0xffc0) === 0xfec0) return refuse('deprecated site-local');
  if ((g0 & 0xff00) === 0xff00) return refuse('multicast');
  if (g0 === 0x2001 && g1 === 0x0db8) return refuse('documentation');
  if (g0 === 0x3fff && (g1 & 0xf000) === 0) return refuse('documentation');
  // Teredo tunnels to an obfuscated IPv4 address we would have to trust blindly.
  if (g0 === 0x2001 && g1 === 0) return refuse('Teredo tunnel');
  if (g0 === 0x2001 && g1 === 2 && g2 === 0) return refuse('benchmarking');
  // All assigned global unicast space is 2000::/3; anything else is reserved.
  if ((g0 & 0xe000) !== 0x2000) return refuse('not global unicast');
  return null;
}

/**
 * Why the guard must not connect to `ip`, as a sentence, or null when it may. `ip` is a bare
 * address (no brackets, no zone id); anything unparseable is refused.
 */
export function addressProblem(ip: string, policy: OutboundPolicy): string | null {
  // A zone id picks a local interface: only meaningful for link-local addresses, never public ones.
  if (ip.includes('%')) return `${ip} names an IPv6 zone, which is never a public address`;
  const v4 = parseIpv4(ip);
  if (v4 !== null) return ipv4Problem(ip, v4, policy.allowLoopback);
  const v6 = parseIpv6(ip);
  if (v6 !== null) return ipv6Problem(ip, v6, policy.allowLoopback);
  return `${ip} is not a valid IP address`;
}

export function isPublicAddress(ip: string): boolean {
  return addressProblem(ip, { allowLoopback: false }) === null;
}
