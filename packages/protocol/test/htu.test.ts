import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ProtocolError, htuMatches, normalizeHtu } from '../src/index.ts';

describe('normalizeHtu', () => {
  it('lower-cases scheme and host, drops default port, query, fragment and userinfo', () => {
    assert.equal(normalizeHtu('HTTPS://Shop.EXAMPLE:443/Orders/42?x=1#frag'), 'https://shop.example/Orders/42');
    assert.equal(normalizeHtu('http://shop.example:80/a'), 'http://shop.example/a');
    assert.equal(normalizeHtu('https://user:pw@shop.example/a'), 'https://shop.example/a');
    assert.equal(normalizeHtu('https://shop.example'), 'https://shop.example/');
  });

  it('keeps non-default ports and the path as is', () => {
    assert.equal(normalizeHtu('https://shop.example:8443/a'), 'https://shop.example:8443/a');
    assert.equal(normalizeHtu('http://shop.example:443/a'), 'http://shop.example:443/a');
    assert.notEqual(normalizeHtu('https://shop.example/a'), normalizeHtu('https://shop.example/a/'));
    assert.notEqual(normalizeHtu('https://shop.example/a'), normalizeHtu('https://shop.example/A'));
  });

  it('refuses unparsable and non-http(s) URLs with invalid_request', () => {
    for (const bad of ['', 'not a url', '/relative/path', 'ftp://shop.example/a', 'javascript:alert(1)', 'file:///etc/passwd', 'https://', 'x'.repeat(9000)]) {
      assert.throws(
        () => normalizeHtu(bad),
        (e: unknown) => e instanceof ProtocolError && e.code === 'invalid_request',
        bad,
      );
    }
  });

  it('htuMatches: proof side garbage is no match, request side garbage throws', () => {
    assert.equal(htuMatches('https://SHOP.example:443/orders?a', 'https://shop.example/orders#b'), true);
    assert.equal(htuMatches('not a url', 'https://shop.example/orders'), false);
    assert.equal(htuMatches('https://shop.example/orders/', 'https://shop.example/orders'), false);
    assert.equal(htuMatches('http://shop.example/orders', 'https://shop.example/orders'), false);
    assert.throws(() => htuMatches('https://shop.example/', 'nope'), ProtocolError);
  });
});

const scheme = fc.constantFrom('http', 'https');
const parts = fc.record({
  scheme,
  host: fc.domain(),
  port: fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined }),
  path: fc.webPath(),
  query: fc.webQueryParameters(),
  fragment: fc.webFragments(),
});

function mixCase(s: string, mask: number): string {
  return [...s].map((c, i) => ((mask >> i % 31) & 1 ? c.toUpperCase() : c)).join('');
}

describe('normalizeHtu properties', () => {
  it('is idempotent on URLs', () => {
    fc.assert(
      fc.property(fc.webUrl({ withQueryParameters: true, withFragments: true }), (u) => {
        const once = normalizeHtu(u);
        assert.equal(normalizeHtu(once), once);
      }),
      { numRuns: 500 },
    );
  });

  it('case of scheme/host, default port, query and fragment never change the result', () => {
    fc.assert(
      fc.property(parts, fc.integer(), fc.integer(), fc.boolean(), (p, m1, m2, addDefault) => {
        const port = p.port === undefined ? '' : `:${p.port}`;
        const base = normalizeHtu(`${p.scheme}://${p.host}${port}${p.path}`);
        const defaultPort = p.scheme === 'https' ? ':443' : ':80';
        const variantPort = p.port === undefined && addDefault ? defaultPort : port;
        const variant = `${mixCase(p.scheme, m1)}://${mixCase(p.host, m2)}${variantPort}${p.path}?${p.query}#${p.fragment}`;
        assert.equal(normalizeHtu(variant), base);
        assert.ok(htuMatches(variant, `${p.scheme}://${p.host}${port}${p.path}`));
      }),
      { numRuns: 500 },
    );
  });

  it('random strings either normalize (idempotently) or throw ProtocolError', () => {
    const anyString = fc.oneof(
      fc.string({ unit: 'binary' }),
      fc.string({ unit: 'grapheme' }),
      fc.tuple(fc.constantFrom('http://', 'https://', 'HTTP://', 'ftp://', '//', ''), fc.string({ unit: 'binary' })).map(([a, b]) => a + b),
    );
    fc.assert(
      fc.property(anyString, (s) => {
        let out: string;
        try {
          out = normalizeHtu(s);
        } catch (e) {
          assert.ok(e instanceof ProtocolError && e.code === 'invalid_request', String(e));
          return;
        }
        assert.equal(normalizeHtu(out), out);
      }),
      { numRuns: 2000 },
    );
  });
});
