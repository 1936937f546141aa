import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { approvalChallenge, canonicalJson, detailsDigestOf, detailsProblem, isDetailsDigest, isDetailsSummary } from '../src/index.ts';

describe('approval details (decisions §28, §29)', () => {
  it('canonical JSON is RFC 8785: sorted keys, no white space, ES number forms', () => {
    // RFC 8785 §3.2.2 / appendix B examples.
    assert.equal(canonicalJson({ b: 1, a: [true, null, 'x'], c: { z: 1e21, y: 0.000001 } }), '{"a":[true,null,"x"],"b":1,"c":{"y":0.000001,"z":1e+21}}');
    assert.equal(canonicalJson({ '\u20ac': 1, '\r': 2, '1': 3 }), '{"\\r":2,"1":3,"€":1}');
    assert.equal(canonicalJson(-0), '0');
    assert.throws(() => canonicalJson(Number.NaN));
    assert.throws(() => canonicalJson('\ud800'));
    assert.throws(() => canonicalJson(undefined), /no JSON form/);
  });

  it('a details digest is base64url SHA-256 of the canonical JSON, whatever the key order', () => {
    const body = { product_id: 'p1', quantity: 1 };
    const expected = createHash('sha256').update('{"product_id":"p1","quantity":1}').digest('base64url');
    assert.equal(detailsDigestOf(body), expected);
    assert.equal(detailsDigestOf({ quantity: 1, product_id: 'p1' }), expected);
    assert.notEqual(detailsDigestOf({ product_id: 'p1', quantity: 2 }), expected);
    assert.ok(isDetailsDigest(expected));
  });

  it('digests: exactly 43 base64url characters in canonical form', () => {
    const good = detailsDigestOf({});
    for (const bad of [good.slice(1), `${good}A`, `${good.slice(0, 42)}B`, `${good.slice(0, 42)}=`, good.replace(/./, '+'), 43, null]) {
      assert.equal(isDetailsDigest(bad), false, String(bad));
    }
  });

  it('summaries: 1 to 500 printable characters, lines allowed, nothing that hides text', () => {
    assert.ok(isDetailsSummary('1 × Notebook, 12.00 EUR, to Demo Shop'));
    assert.ok(isDetailsSummary('line one\nline two'));
    assert.ok(isDetailsSummary('é'.repeat(500)));
    for (const bad of ['', '   ', 'x'.repeat(501), 'pay\u202Eevil', 'a\u200Bb', 'tab\there', 'cr\r\n', 'a\u2028b', 'bell\u0007', 5]) {
      assert.equal(isDetailsSummary(bad), false, JSON.stringify(bad));
    }
  });

  it('detailsProblem names the field that is wrong', () => {
    const digest = detailsDigestOf({ a: 1 });
    assert.equal(detailsProblem({ summary: 'Buy', digest }), null);
    assert.match(detailsProblem('x') ?? '', /details must be an object/);
    assert.match(detailsProblem([]) ?? '', /details must be an object/);
    assert.match(detailsProblem({ summary: 'Buy', digest, extra: 1 }) ?? '', /details\.extra/);
    assert.match(detailsProblem({ summary: '', digest }) ?? '', /details\.summary/);
    assert.match(detailsProblem({ summary: 'Buy', digest: 'abc' }) ?? '', /details\.digest/);
  });

  it('the approval challenge commits to every field (decisions §29)', () => {
    const input = { txn: 't_1', aud: 'shop.example', action: 'checkout', detailsDigest: detailsDigestOf({ a: 1 }), user: 'u_1', nonce: 'AAAAAAAAAAAAAAAAAAAAAA' };
    const challenge = approvalChallenge(input);
    const jcs = `{"action":"checkout","aud":"shop.example","details_digest":"${input.detailsDigest}","nonce":"AAAAAAAAAAAAAAAAAAAAAA","txn":"t_1","user":"u_1","v":1}`;
    assert.equal(challenge, createHash('sha256').update(jcs).digest('base64url'));
    for (const key of ['txn', 'aud', 'action', 'user', 'nonce'] as const) {
      assert.notEqual(approvalChallenge({ ...input, [key]: `${input[key]}x` }), challenge, key);
    }
    assert.notEqual(approvalChallenge({ ...input, detailsDigest: null }), challenge);
    assert.match(approvalChallenge({ ...input, detailsDigest: null }), /^[A-Za-z0-9_-]{43}$/);
  });
});
