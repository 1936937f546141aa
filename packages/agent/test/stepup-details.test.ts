import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { detailsDigestOf } from '@mandate/protocol';
import { stepupDetailsFor } from '../src/stepup-details.ts';

// The details an agent asks a step-up with, from the request it is about to send again: a JSON body
// is bound by its JCS digest (what a site that binds its body computes), any other body is not.

const ACTION = 'buy 1 x Desk lamp for 19.90 EUR';
const SUGGESTED = '1 × Desk lamp, 19.90 EUR, to Demo Shop';
const BASKET = { product_id: 'p1', quantity: 1 };
const json = { 'content-type': 'application/json' };

describe('stepupDetailsFor', () => {
  it('a JSON body: the digest of its canonical JSON (however written, string or bytes) and the summary the site suggests', () => {
    const digest = detailsDigestOf(BASKET);
    assert.deepEqual(stepupDetailsFor({ headers: json, body: '{"product_id":"p1","quantity":1}' }, SUGGESTED, ACTION), { summary: SUGGESTED, digest });
    assert.deepEqual(stepupDetailsFor({ headers: json, body: ' { "quantity" : 1.0 , "product_id" : "p1" } ' }, SUGGESTED, ACTION), { summary: SUGGESTED, digest });
    const bytes = new TextEncoder().encode('{"product_id":"p1","quantity":1}');
    assert.deepEqual(stepupDetailsFor({ headers: new Headers({ 'Content-Type': 'application/merge-patch+json; charset=utf-8' }), body: bytes }, SUGGESTED, ACTION), { summary: SUGGESTED, digest });
    assert.notEqual(stepupDetailsFor({ headers: json, body: '{"product_id":"p1","quantity":2}' }, SUGGESTED, ACTION)?.digest, digest, 'another basket, another digest');
  });

  it('the summary falls back to the action when the site suggests none, or one the service would refuse', () => {
    const body = JSON.stringify(BASKET);
    assert.equal(stepupDetailsFor({ headers: json, body }, undefined, ACTION)?.summary, ACTION);
    assert.equal(stepupDetailsFor({ headers: json, body }, 'x'.repeat(501), ACTION)?.summary, ACTION);
    assert.equal(stepupDetailsFor({ headers: json, body }, 'a\u202Eb', ACTION)?.summary, ACTION, 'a bidi override could hide what is approved');
    assert.equal(stepupDetailsFor({ headers: json, body }, '   ', ACTION)?.summary, ACTION);
  });

  it('no details without a JSON body: none, text, form data, a JSON type whose body does not parse, JSON text sent as text/plain', () => {
    assert.equal(stepupDetailsFor({}, SUGGESTED, ACTION), undefined);
    assert.equal(stepupDetailsFor({ headers: json }, SUGGESTED, ACTION), undefined);
    assert.equal(stepupDetailsFor({ headers: json, body: null }, SUGGESTED, ACTION), undefined);
    assert.equal(stepupDetailsFor({ headers: json, body: '{"product_id": ' }, SUGGESTED, ACTION), undefined);
    assert.equal(stepupDetailsFor({ headers: json, body: new URLSearchParams({ a: '1' }) }, SUGGESTED, ACTION), undefined);
    assert.equal(stepupDetailsFor({ headers: json, body: new Uint8Array([0xff, 0x7b, 0x7d]) }, SUGGESTED, ACTION), undefined, 'not UTF-8');
    assert.equal(stepupDetailsFor({ headers: { 'content-type': 'text/plain' }, body: '{"a":1}' }, SUGGESTED, ACTION), undefined);
    assert.equal(stepupDetailsFor({ headers: { 'content-type': 'application/jsonp' }, body: '{"a":1}' }, SUGGESTED, ACTION), undefined);
  });
});
