import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateAgentKeyPair, jwkThumbprint } from '../src/index.ts';
import { proofKey } from '../src/proof-key-cache.ts';

describe('proof key cache', () => {
  it('returns the same validated key and thumbprint for the same coordinates', async () => {
    const { publicJwk } = await generateAgentKeyPair();
    const a = await proofKey(publicJwk);
    const b = await proofKey({ ...publicJwk });
    assert.equal(a, b);
    assert.equal(a.jkt, await jwkThumbprint(publicJwk));
  });

  it('still refuses a cached key sent with private parts, another alg or use, or another curve name', async () => {
    const { publicJwk } = await generateAgentKeyPair();
    await proofKey(publicJwk);
    const d = 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
    for (const bad of [{ ...publicJwk, d }, { ...publicJwk, alg: 'ES384' }, { ...publicJwk, use: 'enc' }, { ...publicJwk, crv: 'P-384' }, { ...publicJwk, kty: 'OKP' }]) {
      await assert.rejects(proofKey(bad), JSON.stringify(Object.keys(bad)));
    }
  });

  it('checks the curve of coordinates it has not seen', async () => {
    const { publicJwk } = await generateAgentKeyPair();
    const y = Buffer.from(publicJwk.y, 'base64url');
    y[31] = (y[31] ?? 0) ^ 1; // off the curve
    await assert.rejects(proofKey({ ...publicJwk, y: y.toString('base64url') }), /not a valid point/);
  });
});
