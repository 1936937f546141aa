import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { accessTokenHash, jwkThumbprint, verifyDpopProof, verifyDpopSignature } from '../src/index.ts';
import { rejectsWith, vectors as v } from './helpers.ts';

const proof = v.rfc9449_token_request_proof;

describe('known answers (RFC 7638, RFC 9449)', () => {
  it('RFC 7638 §3.1 RSA key thumbprint', async () => {
    assert.equal(await jwkThumbprint(v.rfc7638_rsa_key), v.rfc7638_thumbprint);
  });

  it('RFC 9449 EC key thumbprint (jkt)', async () => {
    assert.equal(await jwkThumbprint(v.rfc9449_ec_key), v.rfc9449_jkt);
  });

  it('RFC 9449 ath of the example access token', () => {
    assert.equal(accessTokenHash(v.rfc9449_access_token), v.rfc9449_ath);
  });

  it('RFC 9449 token-request proof: header, signature and claims verify', async () => {
    const r = await verifyDpopSignature(proof.jwt);
    assert.equal(r.jkt, v.rfc9449_jkt);
    assert.deepEqual(r.jwk, v.rfc9449_ec_key);
    assert.deepEqual(r.claims, { htm: proof.htm, htu: proof.htu, iat: proof.iat, jti: proof.jti });
  });

  it('RFC 9449 proof is refused by verifyDpopProof for lack of ath, though all else matches', async () => {
    await rejectsWith(
      verifyDpopProof(proof.jwt, {
        method: 'POST',
        url: proof.htu,
        accessToken: v.rfc9449_access_token,
        now: proof.iat,
        jkt: v.rfc9449_jkt,
      }),
      'invalid_dpop',
    );
  });

  it('the high-S twin also verifies, with the same jti: replay must key on jti', async () => {
    const twin = v.rfc9449_token_request_proof_high_s_twin.jwt;
    assert.notEqual(twin, proof.jwt);
    const a = await verifyDpopSignature(proof.jwt);
    const b = await verifyDpopSignature(twin);
    assert.equal(b.claims.jti, a.claims.jti);
    assert.equal(b.jkt, a.jkt);
  });

  it('a flipped signature byte of the RFC proof is refused', async () => {
    const [h, p, s] = proof.jwt.split('.');
    const flipped = `${h}.${p}.${s?.startsWith('2') ? `3${s.slice(1)}` : `2${s?.slice(1)}`}`;
    await rejectsWith(verifyDpopSignature(flipped), 'invalid_dpop');
  });
});
