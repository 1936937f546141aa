import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { exportJWK, generateKeyPair } from 'jose';
import type { DpopExpectation } from '../src/index.ts';
import { accessTokenHash, createDpopProof, verifyDpopProof } from '../src/index.ts';
import type { Agent } from './helpers.ts';
import { NOW, URL_, b64json, highSTwin, newAgent, rawProof, rejectsWith, signRaw } from './helpers.ts';

const TOKEN = 'the-access-token';
let agent: Agent;
let other: Agent;

function expect(over: Partial<DpopExpectation> = {}): DpopExpectation {
  return { method: 'POST', url: URL_, accessToken: TOKEN, now: NOW, jkt: agent.jkt, ...over };
}

before(async () => {
  agent = await newAgent();
  other = await newAgent();
});

describe('verifyDpopProof: valid proofs', () => {
  it('accepts a proof made by createDpopProof and returns jti, iat, jkt, jwk', async () => {
    const proof = await createDpopProof(agent.privateKey, agent.publicJwk, {
      htm: 'post',
      htu: `${URL_}?q=1#f`,
      accessToken: TOKEN,
      iat: NOW,
      jti: 'jti-abcdefgh',
    });
    const r = await verifyDpopProof(proof, expect());
    assert.deepEqual(r, { jti: 'jti-abcdefgh', iat: NOW, jkt: agent.jkt, jwk: agent.publicJwk });
  });

  it('without expect.jkt any valid key is accepted and its thumbprint returned', async () => {
    const r = await verifyDpopProof(await rawProof(other, TOKEN), expect({ jkt: undefined }));
    assert.equal(r.jkt, other.jkt);
  });

  it('ignores unknown claims and compares htm with the upper-cased method', async () => {
    await verifyDpopProof(await rawProof(agent, TOKEN, { url: 'https://evil.example/', nonce: 5 }), expect({ method: 'post' }));
  });

  it('the high-S twin of a proof verifies too (same jti: the replay store must key on it)', async () => {
    const proof = await rawProof(agent, TOKEN);
    const twin = highSTwin(proof);
    assert.notEqual(twin, proof);
    assert.equal((await verifyDpopProof(twin, expect())).jti, (await verifyDpopProof(proof, expect())).jti);
  });
});

describe('verifyDpopProof: header and key attacks', () => {
  it('alg none (empty or bogus signature)', async () => {
    const header = b64json({ typ: 'dpop+jwt', alg: 'none', jwk: agent.publicJwk });
    const body = b64json({ htm: 'POST', htu: URL_, iat: NOW, jti: 'proof-jti-0001', ath: accessTokenHash(TOKEN) });
    await rejectsWith(verifyDpopProof(`${header}.${body}.`, expect()), 'invalid_dpop');
    await rejectsWith(verifyDpopProof(`${header}.${body}.AAAA`, expect()), 'invalid_dpop');
  });

  it('alg none with a valid ES256 signature (header says none)', async () => {
    const good = await rawProof(agent, TOKEN);
    const [, body, sig] = good.split('.');
    const header = b64json({ typ: 'dpop+jwt', alg: 'none', jwk: agent.publicJwk });
    await rejectsWith(verifyDpopProof(`${header}.${body}.${sig}`, expect()), 'invalid_dpop');
  });

  it('HS256 signed with the public key bytes as HMAC secret', async () => {
    for (const secret of [
      new TextEncoder().encode(JSON.stringify(agent.publicJwk)),
      Buffer.concat([Buffer.from([4]), Buffer.from(agent.publicJwk.x, 'base64url'), Buffer.from(agent.publicJwk.y, 'base64url')]),
    ]) {
      const proof = await signRaw(
        { typ: 'dpop+jwt', alg: 'HS256', jwk: agent.publicJwk },
        { htm: 'POST', htu: URL_, iat: NOW, jti: 'proof-jti-0001', ath: accessTokenHash(TOKEN) },
        secret,
      );
      await rejectsWith(verifyDpopProof(proof, expect()), 'invalid_dpop');
    }
  });

  it('ES384 with a P-384 key, and alg ES256 claimed over a P-384 jwk', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES384', { extractable: true });
    const jwk = await exportJWK(publicKey);
    const claims = { htm: 'POST', htu: URL_, iat: NOW, jti: 'proof-jti-0001', ath: accessTokenHash(TOKEN) };
    await rejectsWith(verifyDpopProof(await signRaw({ typ: 'dpop+jwt', alg: 'ES384', jwk }, claims, privateKey), expect({ jkt: undefined })), 'invalid_dpop');
    // Signed with the agent's P-256 key but advertising a P-384 jwk
    await rejectsWith(verifyDpopProof(await rawProof(agent, TOKEN, {}, { jwk }), expect({ jkt: undefined })), 'invalid_dpop');
  });

  it('RS256 with an RSA jwk', async () => {
    const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
    const jwk = await exportJWK(publicKey);
    const claims = { htm: 'POST', htu: URL_, iat: NOW, jti: 'proof-jti-0001', ath: accessTokenHash(TOKEN) };
    await rejectsWith(verifyDpopProof(await signRaw({ typ: 'dpop+jwt', alg: 'RS256', jwk }, claims, privateKey), expect({ jkt: undefined })), 'invalid_dpop');
  });

  it('a jwk carrying the private part d', async () => {
    await rejectsWith(verifyDpopProof(await rawProof(agent, TOKEN, {}, { jwk: agent.privateJwk }), expect()), 'invalid_dpop');
  });

  it('missing jwk, or a jwk of another key than the signer', async () => {
    await rejectsWith(verifyDpopProof(await rawProof(agent, TOKEN, {}, { jwk: undefined }), expect()), 'invalid_dpop');
    await rejectsWith(verifyDpopProof(await rawProof(agent, TOKEN, {}, { jwk: other.publicJwk }), expect({ jkt: other.jkt })), 'invalid_dpop');
  });

  it('wrong or missing typ', async () => {
    for (const typ of ['JWT', 'at+jwt', 'DPOP+JWT', undefined]) {
      await rejectsWith(verifyDpopProof(await rawProof(agent, TOKEN, {}, { typ }), expect()), 'invalid_dpop');
    }
  });

  it('a proof signed by another key than the one the pass is bound to: dpop_key_mismatch', async () => {
    await rejectsWith(verifyDpopProof(await rawProof(other, TOKEN), expect()), 'dpop_key_mismatch');
  });

  it('tampered payload or signature', async () => {
    const proof = await rawProof(agent, TOKEN);
    const [h, p, s] = proof.split('.') as [string, string, string];
    const forged = b64json({ htm: 'GET', htu: URL_, iat: NOW, jti: 'proof-jti-0001', ath: accessTokenHash(TOKEN) });
    await rejectsWith(verifyDpopProof(`${h}.${forged}.${s}`, expect({ method: 'GET' })), 'invalid_dpop');
    const flip = (str: string, i: number): string => str.slice(0, i) + (str[i] === 'A' ? 'B' : 'A') + str.slice(i + 1);
    await rejectsWith(verifyDpopProof(`${h}.${flip(p, 5)}.${s}`, expect()), 'invalid_dpop');
    await rejectsWith(verifyDpopProof(`${h}.${p}.${flip(s, 10)}`, expect()), 'invalid_dpop');
  });

  it('a header vetted before (kept by its text) still needs its own well-formed proof and signature', async () => {
    const proof = await rawProof(agent, TOKEN);
    await verifyDpopProof(proof, expect()); // the header is now kept
    const [h, p, s] = proof.split('.') as [string, string, string];
    for (const bad of [`${h}.${p}`, `${h}.${p}.${s}.${s}`, `${h}.${p}.`, `${h}..${s}`, `${h}.${p}.${s}!`]) {
      await rejectsWith(verifyDpopProof(bad, expect()), 'invalid_dpop');
    }
    // Same header, another agent's signature over the same payload.
    const stranger = (await rawProof(other, TOKEN)).split('.')[2];
    await rejectsWith(verifyDpopProof(`${h}.${p}.${stranger}`, expect()), 'invalid_dpop');
    // A refused header is never kept: refused again, by the same check.
    const typNone = b64json({ typ: 'jwt', alg: 'ES256', jwk: agent.publicJwk });
    for (let i = 0; i < 2; i++) await rejectsWith(verifyDpopProof(`${typNone}.${p}.${s}`, expect()), 'invalid_dpop');
  });
});

describe('verifyDpopProof: claims', () => {
  it('ath missing, mismatched, or not a string: invalid_dpop', async () => {
    await rejectsWith(verifyDpopProof(await rawProof(agent, TOKEN, { ath: undefined }), expect()), 'invalid_dpop');
    await rejectsWith(verifyDpopProof(await rawProof(agent, 'another-token'), expect()), 'invalid_dpop');
    await rejectsWith(verifyDpopProof(await rawProof(agent, TOKEN, { ath: 5 }), expect()), 'invalid_dpop');
  });

  it('htm mismatch', async () => {
    await rejectsWith(verifyDpopProof(await rawProof(agent, TOKEN, { htm: 'GET' }), expect()), 'dpop_method_mismatch');
    await rejectsWith(verifyDpopProof(await rawProof(agent, TOKEN, { htm: 'post' }), expect()), 'dpop_method_mismatch');
    await rejectsWith(verifyDpopProof(await rawProof(agent, TOKEN, { htm: undefined }), expect()), 'invalid_dpop');
  });

  const htuOk: Array<[string, string]> = [
    ['HTTPS://SHOP.EXAMPLE/orders/42', URL_],
    ['https://shop.example:443/orders/42', URL_],
    ['https://shop.example/orders/42?a=1', URL_],
    ['https://shop.example/orders/42#frag', URL_],
    [URL_, 'HTTPS://Shop.Example:443/orders/42?page=2#x'],
  ];
  for (const [htu, url] of htuOk) {
    it(`htu ${htu} matches request ${url}`, async () => {
      await verifyDpopProof(await rawProof(agent, TOKEN, { htu }), expect({ url }));
    });
  }

  const htuBad: Array<[string, string]> = [
    ['https://shop.example/orders/42/', URL_],
    [URL_, 'https://shop.example/orders/42/'],
    ['https://other.example/orders/42', URL_],
    ['https://shop.example/orders/43', URL_],
    ['https://shop.example/Orders/42', URL_],
    ['http://shop.example/orders/42', URL_],
    ['https://shop.example:8443/orders/42', URL_],
    ['not a url', URL_],
  ];
  for (const [htu, url] of htuBad) {
    it(`htu ${htu} does not match request ${url}`, async () => {
      await rejectsWith(verifyDpopProof(await rawProof(agent, TOKEN, { htu }), expect({ url })), 'dpop_url_mismatch');
    });
  }

  it('iat within ±120 s is accepted, ±121 s is stale', async () => {
    for (const d of [-120, 0, 120]) await verifyDpopProof(await rawProof(agent, TOKEN, { iat: NOW + d }), expect());
    for (const d of [-121, 121, -100000]) {
      await rejectsWith(verifyDpopProof(await rawProof(agent, TOKEN, { iat: NOW + d }), expect()), 'dpop_stale');
    }
  });

  it('iat missing, fractional or a string: invalid_dpop', async () => {
    for (const iat of [undefined, NOW + 0.5, String(NOW)]) {
      await rejectsWith(verifyDpopProof(await rawProof(agent, TOKEN, { iat }), expect()), 'invalid_dpop');
    }
  });

  it('jti of 8 and 128 characters accepted, 7 and 129 refused, non-string or control characters refused', async () => {
    for (const n of [8, 128]) await verifyDpopProof(await rawProof(agent, TOKEN, { jti: 'j'.repeat(n) }), expect());
    for (const jti of ['j'.repeat(7), 'j'.repeat(129), undefined, 12345678, '', 'jti-\u0000-abcdef', 'jti-\n-abcdefg', 'jti-\u007f-abcdef']) {
      await rejectsWith(verifyDpopProof(await rawProof(agent, TOKEN, { jti }), expect()), 'invalid_dpop');
    }
  });

  it("the caller's own bad inputs are invalid_request", async () => {
    const proof = await rawProof(agent, TOKEN);
    await rejectsWith(verifyDpopProof(proof, expect({ url: 'not a url' })), 'invalid_request');
    await rejectsWith(verifyDpopProof(proof, expect({ method: '' })), 'invalid_request');
    await rejectsWith(verifyDpopProof(proof, expect({ accessToken: '' })), 'invalid_request');
    await rejectsWith(verifyDpopProof(proof, expect({ now: Number.NaN })), 'invalid_request');
  });
});
