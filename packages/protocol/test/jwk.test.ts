import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { exportJWK, generateKeyPair } from 'jose';
import { JwkError, jwkThumbprint, parsePublicP256Jwk } from '../src/index.ts';
import { vectors as v } from './helpers.ts';

const good = v.rfc9449_ec_key;

function refused(value: unknown, pattern: RegExp): void {
  assert.throws(() => parsePublicP256Jwk(value), (e: unknown) => e instanceof JwkError && pattern.test(e.message));
}

describe('parsePublicP256Jwk', () => {
  it('accepts a public P-256 key and returns only the four members', async () => {
    const out = parsePublicP256Jwk({ ...good, kid: 'x', alg: 'ES256', use: 'sig', ext: true });
    assert.deepEqual(out, good);
    assert.deepEqual(Object.keys(out).sort(), ['crv', 'kty', 'x', 'y']);
    assert.equal(await jwkThumbprint(out), v.rfc9449_jkt);
  });

  it('refuses a private key (d)', async () => {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    refused(await exportJWK(privateKey), /private/);
  });

  it('refuses non-objects', () => {
    for (const x of [null, undefined, 'jwk', 5, [good], true]) refused(x, /object/);
  });

  it('refuses RSA, OKP, other curves, wrong alg or use', async () => {
    refused(v.rfc7638_rsa_key, /kty/);
    const p384 = await exportJWK((await generateKeyPair('ES384')).publicKey);
    refused(p384, /P-256/);
    const ed = await exportJWK((await generateKeyPair('Ed25519')).publicKey);
    refused(ed, /kty/);
    refused({ ...good, alg: 'ES384' }, /alg/);
    refused({ ...good, use: 'enc' }, /use/);
  });

  it('refuses malformed coordinates', () => {
    refused({ ...good, x: undefined }, /coordinates/);
    refused({ ...good, x: good.x.slice(1) }, /coordinates/);
    refused({ ...good, y: `${good.y}A` }, /coordinates/);
    refused({ ...good, x: `${good.x.slice(0, 42)}+` }, /coordinates/);
    // same 32 bytes, non-zero padding bits: would give a second thumbprint for one key
    assert.ok(good.x.endsWith('s'));
    refused({ ...good, x: `${good.x.slice(0, 42)}t` }, /coordinates/);
  });

  it('refuses a point that is not on the curve', () => {
    refused({ ...good, y: good.x }, /point/);
    refused({ ...good, x: 'A'.repeat(43), y: 'A'.repeat(43) }, /point/);
  });
});
