import assert from 'node:assert/strict';
import { KeyObject } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { generateKeyPair } from 'jose';
import type { CryptoKey } from 'jose';
import { type SignatureCheck, verifyEs256Compact as verifyOn } from '../src/es256.ts';
import { splitCompact } from '../src/jws.ts';
import { b64json, signRaw } from './helpers.ts';

// The DPoP signature check on node:crypto must refuse everything jose's compactVerify refused for it,
// on the thread pool and inline alike.

let privateKey: CryptoKey;
let publicKey: CryptoKey;

before(async () => {
  ({ privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true }));
});

const header = (token: string) => {
  const parts = splitCompact(token, 8192);
  assert.ok(parts);
  return parts.header;
};

for (const check of ['thread-pool', 'inline'] as SignatureCheck[]) describe(`verifyEs256Compact (${check})`, () => {
  // The function takes a KeyObject (as dpop.ts passes it); the test's keys are extractable CryptoKeys, made KeyObjects here.
  const verifyEs256Compact = (token: string, h: Parameters<typeof verifyOn>[1], key: CryptoKey) => verifyOn(token, h, KeyObject.from(key), check);
  it('returns the payload bytes of a valid ES256 JWS', async () => {
    const token = await signRaw({ alg: 'ES256', typ: 'dpop+jwt' }, { jti: 'abcdefgh' }, privateKey);
    const payload = await verifyEs256Compact(token, header(token), publicKey);
    assert.deepEqual(JSON.parse(Buffer.from(payload ?? []).toString('utf8')), { jti: 'abcdefgh' });
  });

  it('refuses a changed payload or header, and another key', async () => {
    const token = await signRaw({ alg: 'ES256', typ: 'dpop+jwt' }, { jti: 'abcdefgh' }, privateKey);
    const [h, , s] = token.split('.');
    const otherPayload = `${h}.${b64json({ jti: 'ijklmnop' })}.${s}`;
    assert.equal(await verifyEs256Compact(otherPayload, header(otherPayload), publicKey), null);
    const otherHeader = `${b64json({ alg: 'ES256', typ: 'JWT' })}.${token.split('.')[1]}.${s}`;
    assert.equal(await verifyEs256Compact(otherHeader, header(otherHeader), publicKey), null);
    const other = (await generateKeyPair('ES256', { extractable: true })).publicKey;
    assert.equal(await verifyEs256Compact(token, header(token), other), null);
  });

  it('refuses a signature that is not 64 bytes', async () => {
    const token = await signRaw({ alg: 'ES256', typ: 'dpop+jwt' }, { jti: 'abcdefgh' }, privateKey);
    const [h, p, s] = token.split('.') as [string, string, string];
    const raw = Buffer.from(s, 'base64url');
    for (const sig of [raw.subarray(0, 63), Buffer.concat([raw, Buffer.from([0])]), Buffer.alloc(0)]) {
      const t = `${h}.${p}.${sig.toString('base64url')}`;
      assert.equal(await verifyEs256Compact(t, { alg: 'ES256' }, publicKey), null);
    }
  });

  it('refuses any crit header (no JWS extension is understood), and an alg other than ES256', async () => {
    const withCrit = await signRaw({ alg: 'ES256', typ: 'dpop+jwt', crit: ['b64'], b64: true }, { jti: 'abcdefgh' }, privateKey);
    assert.equal(await verifyEs256Compact(withCrit, header(withCrit), publicKey), null);
    const token = await signRaw({ alg: 'ES256', typ: 'dpop+jwt' }, { jti: 'abcdefgh' }, privateKey);
    assert.equal(await verifyEs256Compact(token, { ...header(token), alg: 'ES384' }, publicKey), null);
  });

  it('refuses keys that are not public P-256 ECDSA keys', async () => {
    const token = await signRaw({ alg: 'ES256', typ: 'dpop+jwt' }, { jti: 'abcdefgh' }, privateKey);
    assert.equal(await verifyEs256Compact(token, header(token), privateKey), null);
    const p384 = (await generateKeyPair('ES384', { extractable: true })).publicKey;
    assert.equal(await verifyEs256Compact(token, header(token), p384), null);
  });
});
