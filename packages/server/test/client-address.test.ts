import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BlockList } from 'node:net';
import fc from 'fast-check';
import { clientKeys, formatIPv6, parseIPv6 } from '../src/domain/client-address.ts';

// The keys per-address limits count a client under (issue 22, item 4): IPv4 as is, IPv4-mapped IPv6
// as IPv4, other IPv6 by /64 (and /48 as the coarser key), whatever the spelling. The limits that
// use them, over real HTTP: ipv6-throttles-http.test.ts.

describe('client address keys', () => {
  it('maps every spelling to one key (table)', () => {
    const table: [string, string, string | undefined][] = [
      ['192.0.2.1', '192.0.2.1', undefined],
      [' 192.0.2.1 ', '192.0.2.1', undefined],
      ['::ffff:192.0.2.1', '192.0.2.1', undefined],
      ['::FFFF:192.0.2.1', '192.0.2.1', undefined],
      ['::ffff:c000:201', '192.0.2.1', undefined],
      ['0:0:0:0:0:ffff:c000:0201', '192.0.2.1', undefined],
      ['0000:0000:0000:0000:0000:FFFF:192.0.2.1', '192.0.2.1', undefined],
      ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64', '2001:db8:1::/48'],
      ['2001:DB8:1:2::FFFF', '2001:db8:1:2::/64', '2001:db8:1::/48'],
      ['2001:0db8:0001:0002:0000:0000:0000:0001', '2001:db8:1:2::/64', '2001:db8:1::/48'],
      ['2001:db8:1:2:a:b:192.0.2.1', '2001:db8:1:2::/64', '2001:db8:1::/48'],
      ['fe80::1%eth0', 'fe80::/64', 'fe80::/48'],
      ['fe80::abcd%25', 'fe80::/64', 'fe80::/48'],
      ['[2001:db8::1]', '2001:db8::/64', '2001:db8::/48'],
      ['2001:db8::', '2001:db8::/64', '2001:db8::/48'],
      ['::', '::/64', '::/48'],
      ['::1', '::/64', '::/48'],
      ['1:0:0:1::', '1:0:0:1::/64', '1::/48'],
      ['1:2:3:4:5:6:7:8', '1:2:3:4::/64', '1:2:3::/48'],
      // ::ffff:0:0/96 only: the IPv4-translated ::ffff:0:a.b.c.d and NAT64 prefixes stay IPv6.
      ['::ffff:0:192.0.2.1', '::/64', '::/48'],
      ['64:ff9b::192.0.2.1', '64:ff9b::/64', '64:ff9b::/48'],
      // Not an address: its own key, lower-cased and capped; no network key.
      ['Not-An-Address', 'not-an-address', undefined],
      ['1.2.3', '1.2.3', undefined],
      ['2001:db8::1::2', '2001:db8::1::2', undefined],
      ['x'.repeat(500), 'x'.repeat(100), undefined],
    ];
    for (const [text, address, network] of table) assert.deepEqual(clientKeys(text), { address, network }, text);
  });

  it('formats like RFC 5952', () => {
    assert.equal(formatIPv6([0x2001, 0xdb8, 0, 0, 1, 0, 0, 1]), '2001:db8::1:0:0:1', 'the first of two equal runs');
    assert.equal(formatIPv6([0x2001, 0xdb8, 0, 1, 1, 1, 1, 1]), '2001:db8:0:1:1:1:1:1', 'one zero group stays');
    assert.equal(formatIPv6([0x2001, 0, 0, 1, 0, 0, 0, 1]), '2001:0:0:1::1', 'the longest run');
    assert.equal(formatIPv6([0, 0, 0, 0, 0, 0, 0, 0]), '::');
  });
});

// ---- properties ----

const hextet = fc.integer({ min: 0, max: 0xffff });
const groups = (n: number) => fc.array(hextet, { minLength: n, maxLength: n });

/** One textual spelling of eight groups: full or `::`-compressed at any zero run, any case, leading zeros, an IPv4 tail, a zone id. */
const spelling = (h: number[]) =>
  fc.record({ compress: fc.nat(), upper: fc.boolean(), pad: fc.boolean(), v4tail: fc.boolean(), zone: fc.boolean() }).map((o) => {
    const hex = (g: number) => {
      const t = o.pad ? g.toString(16).padStart(4, '0') : g.toString(16);
      return o.upper ? t.toUpperCase() : t;
    };
    const parts = o.v4tail ? [...h.slice(0, 6).map(hex), `${h[6]! >> 8}.${h[6]! & 0xff}.${h[7]! >> 8}.${h[7]! & 0xff}`] : h.map(hex);
    const units = o.v4tail ? 7 : 8; // the IPv4 tail is one unit, never inside a `::`
    const runs: [number, number][] = [];
    for (let i = 0; i < units; i++) if (h[i] === 0 && (o.v4tail ? i < 6 : true)) {
      let j = i;
      while (j < units && h[j] === 0 && (o.v4tail ? j < 6 : true)) j++;
      for (let a = i; a < j; a++) for (let b = a + 1; b <= j; b++) runs.push([a, b]);
      i = j;
    }
    const chosen = o.compress % (runs.length + 1);
    let text: string;
    if (chosen === runs.length) text = parts.join(':');
    else {
      const [a, b] = runs[chosen]!;
      text = `${parts.slice(0, a).join(':')}::${parts.slice(b).join(':')}`;
    }
    return o.zone ? `${text}%eth0` : text;
  });

/** Eight groups that are not an IPv4-mapped address. */
const ipv6 = groups(8).filter((h) => !(h.slice(0, 5).every((g) => g === 0) && h[5] === 0xffff));

describe('client address keys (properties)', () => {
  it('parses every spelling back to its groups', () => {
    fc.assert(fc.property(groups(8).chain((h) => fc.tuple(fc.constant(h), spelling(h))), ([h, text]) => {
      assert.deepEqual(parseIPv6(text), h, text);
    }), { numRuns: 2000 });
  });

  it('maps every address of one /64 to one key, which names that /64', () => {
    const sameSlash64 = fc.tuple(groups(4), groups(4), groups(4)).filter(([p]) => !(p.every((g) => g === 0)));
    fc.assert(fc.property(sameSlash64.chain(([p, a, b]) => fc.tuple(fc.constant(p), spelling([...p, ...a]), spelling([...p, ...b]))), ([p, x, y]) => {
      const kx = clientKeys(x);
      assert.equal(kx.address, clientKeys(y).address, `${x} and ${y}`);
      // An oracle of Node's own: the key, read as a /64, contains the address.
      const [net, bits] = kx.address.split('/');
      const list = new BlockList();
      list.addSubnet(net!, Number(bits), 'ipv6');
      assert.ok(list.check(x.replace(/%.*$/, ''), 'ipv6'), `${kx.address} contains ${x}`);
      assert.equal(parseIPv6(net!)?.slice(0, 4).join(), p.join());
    }), { numRuns: 1000 });
  });

  it('gives different /64s different keys, and different /48s different network keys', () => {
    fc.assert(fc.property(ipv6, ipv6, (a, b) => {
      const ka = clientKeys(formatIPv6(a));
      const kb = clientKeys(formatIPv6(b));
      assert.equal(ka.address === kb.address, a.slice(0, 4).join() === b.slice(0, 4).join());
      assert.equal(ka.network === kb.network, a.slice(0, 3).join() === b.slice(0, 3).join());
    }), { numRuns: 2000 });
    // Neighbours differing in the last bit of the /64 (or /48) only.
    fc.assert(fc.property(ipv6, (h) => {
      const flip64 = [...h.slice(0, 3), h[3]! ^ 1, ...h.slice(4)];
      const flip48 = [...h.slice(0, 2), h[2]! ^ 1, ...h.slice(3)];
      assert.notEqual(clientKeys(formatIPv6(h)).address, clientKeys(formatIPv6(flip64)).address);
      assert.equal(clientKeys(formatIPv6(h)).network, clientKeys(formatIPv6(flip64)).network);
      assert.notEqual(clientKeys(formatIPv6(h)).network, clientKeys(formatIPv6(flip48)).network);
    }));
  });

  it('keys an IPv4-mapped address, however spelled, as the IPv4 address', () => {
    const v4 = groups(4).map((b) => b.map((x) => x & 0xff));
    fc.assert(fc.property(v4.chain((b) => fc.tuple(fc.constant(b), spelling([0, 0, 0, 0, 0, 0xffff, (b[0]! << 8) | b[1]!, (b[2]! << 8) | b[3]!]))), ([b, text]) => {
      const plain = b.join('.');
      assert.deepEqual(clientKeys(text), clientKeys(plain), text);
      assert.deepEqual(clientKeys(plain), { address: plain, network: undefined });
    }), { numRuns: 1000 });
  });
});
