/**
 * The keys a per-address limit counts a client under (issue 22, item 4). Pure: text in, text out.
 *
 * Anyone with one IPv6 connection holds at least a /64 (2^64 addresses: a new one per request costs
 * nothing), and an end site usually gets a /48 (RFC 6177; a free tunnel broker hands out /48s too).
 * Counting the raw address would give such a client a fresh allowance per request. So:
 *
 * - `address`: what one client is assumed to control alone. An IPv4 address as is; an IPv4-mapped
 *   IPv6 address (`::ffff:192.0.2.1`, in any spelling: what a dual-stack socket reports for an IPv4
 *   peer) as that IPv4 address; any other IPv6 address as its /64, in canonical text
 *   (`2001:db8:0:1::/64`), whatever the spelling (`::` compression, case, leading zeros, zone id,
 *   an IPv4 tail).
 * - `network`: a coarser key for the limits that need one (sign-up, password guessing, pairing):
 *   the /48 of an IPv6 address. IPv4 gets none: an IPv4 address is scarce (an attacker pays for each
 *   one), whereas a /24 of a home ISP mixes up to 254 unrelated households, which one abuser there
 *   would throttle.
 *
 * Text that is not an IP address (a proxy that sent something odd; TRUST_PROXY only believes the
 * entries its proxies add) is its own key, trimmed, lower-cased and capped, with no network key.
 */
import { isIPv4, isIPv6 } from 'node:net';

export interface ClientKeys {
  /** One client: IPv4 address, or IPv6 /64 such as `2001:db8:0:1::/64`. */
  address: string;
  /** The IPv6 /48 (`2001:db8::/48`), or undefined for IPv4 and anything that is not an address. */
  network: string | undefined;
}

/** Longest key kept from text that is not an address: a counter key must stay small. */
const MAX_OTHER = 100;

export function clientKeys(clientAddress: string): ClientKeys {
  const text = clientAddress.trim();
  if (isIPv4(text)) return { address: text, network: undefined };
  const hextets = parseIPv6(text);
  if (hextets === undefined) return { address: text.toLowerCase().slice(0, MAX_OTHER), network: undefined };
  const mapped = mappedIPv4(hextets);
  if (mapped !== undefined) return { address: mapped, network: undefined };
  return { address: prefixText(hextets, 4, 64), network: prefixText(hextets, 3, 48) };
}

/** The key of one client alone (see `clientKeys`). */
export const addressKey = (clientAddress: string): string => clientKeys(clientAddress).address;

/**
 * The eight 16-bit groups of an IPv6 address, or undefined when it is not one. Takes a zone id
 * (`fe80::1%eth0`, dropped: it names the local interface, not the peer) and brackets (`[::1]`).
 */
export function parseIPv6(text: string): number[] | undefined {
  let s = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  if (!isIPv6(s)) return undefined;
  // isIPv6 vouched for the syntax: at most one '::', groups of 1-4 hex digits, an IPv4 tail only last.
  const [head = '', tail] = s.split('::');
  const groups = (part: string): number[] => {
    if (part === '') return [];
    const out: number[] = [];
    for (const g of part.split(':')) {
      if (g.includes('.')) {
        const [a = 0, b = 0, c = 0, d = 0] = g.split('.').map(Number);
        out.push((a << 8) | b, (c << 8) | d);
      } else out.push(parseInt(g, 16));
    }
    return out;
  };
  const left = groups(head);
  if (tail === undefined) return left.length === 8 ? left : undefined;
  const right = groups(tail);
  const zeros = 8 - left.length - right.length;
  return zeros < 1 ? undefined : [...left, ...Array<number>(zeros).fill(0), ...right];
}

/** `::ffff:a.b.c.d` (80 zero bits, 16 one bits, the IPv4 address) as `a.b.c.d`, else undefined. */
function mappedIPv4(h: readonly number[]): string | undefined {
  if (h.slice(0, 5).some((g) => g !== 0) || h[5] !== 0xffff) return undefined;
  const [hi = 0, lo = 0] = h.slice(6);
  return `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
}

/** The first `keep` groups, the rest zero, in RFC 5952 text, with `/bits`. */
function prefixText(h: readonly number[], keep: number, bits: number): string {
  return `${formatIPv6([...h.slice(0, keep), ...Array<number>(8 - keep).fill(0)])}/${bits}`;
}

/** RFC 5952: lower case, no leading zeros, the first longest run of two or more zero groups as `::`. */
export function formatIPv6(h: readonly number[]): string {
  let best = { at: -1, len: 1 };
  for (let i = 0; i < h.length; ) {
    if (h[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < h.length && h[j] === 0) j++;
    if (j - i > best.len) best = { at: i, len: j - i };
    i = j;
  }
  const hex = (part: readonly number[]): string => part.map((g) => g.toString(16)).join(':');
  if (best.at < 0) return hex(h);
  return `${hex(h.slice(0, best.at))}::${hex(h.slice(best.at + best.len))}`;
}
