import assert from 'node:assert/strict';
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { describe, it } from 'node:test';
import { signatureHeaders, verify } from 'web-bot-auth';
import { signerFromJWK, verifierFromJWK } from 'web-bot-auth/crypto';
import {
  JwkError, contentDigest, contentDigestMatches, directoryBody, ed25519Thumbprint, fieldComponentValue, parseEd25519PublicJwk,
  readSignatureAgent, readSignatures, signDirectory, signRequest, signatureBase, verifyEd25519, type Ed25519PublicJwk,
} from '../src/index.ts';

// RFC 9421 Appendix B.1.4 test key (also Cloudflare's README key).
const RFC_KEY = { kty: 'OKP', crv: 'Ed25519', d: 'n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU', x: 'JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs' } as const;
const pub: Ed25519PublicJwk = { kty: 'OKP', crv: 'Ed25519', x: RFC_KEY.x };

function freshKey() {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const jwk = parseEd25519PublicJwk(publicKey.export({ format: 'jwk' }));
  return { privateKey, jwk, keyid: ed25519Thumbprint(jwk) };
}

describe('Ed25519 keys and directories', () => {
  it('thumbprint is RFC 7638 (the published value for the RFC 9421 test key)', () => {
    // Cloudflare's examples list this key under kid poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U.
    assert.equal(ed25519Thumbprint(pub), 'poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U');
  });
  it('refuses private parts, other types and curves, bad x', () => {
    for (const [v, re] of [[RFC_KEY, /private/], [{ ...pub, kty: 'EC' }, /OKP/], [{ ...pub, crv: 'X25519' }, /Ed25519/], [{ ...pub, x: 'abc' }, /32 bytes/], [{ ...pub, x: `${pub.x}A` }, /32 bytes/], [null, /object/]] as const) {
      assert.throws(() => parseEd25519PublicJwk(v), (e: unknown) => e instanceof JwkError && re.test(e.message));
    }
  });
  it('directory body is exact and its digest matches', () => {
    const body = directoryBody([pub]);
    assert.equal(body, `{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"${ed25519Thumbprint(pub)}","x":"${pub.x}","use":"sig"}]}`);
    assert.ok(contentDigestMatches(contentDigest(body), body));
    assert.ok(!contentDigestMatches(contentDigest(body), `${body} `));
    assert.ok(!contentDigestMatches('md5=:AAAA:', body));
  });
});

describe('signatures', () => {
  it('a directory signature verifies from the parsed headers', () => {
    const k = freshKey();
    const body = directoryBody([k.jwk]);
    const h = signDirectory({ authority: 'a-0123456789ab.example.com', body, key: k, created: 1000, lifetimeSec: 3600 });
    const [sig] = readSignatures(h['Signature-Input'], h.Signature);
    assert.equal(sig?.params.tag, 'http-message-signatures-directory');
    assert.equal(sig?.params.expires, 4600);
    const base = signatureBase(sig!, (c) => (c.name === '@authority' ? 'a-0123456789ab.example.com' : h['Content-Digest']));
    assert.ok(verifyEd25519(base, sig!.signature, k.jwk));
    const wrong = signatureBase(sig!, (c) => (c.name === '@authority' ? 'other.example.com' : h['Content-Digest']));
    assert.ok(!verifyEd25519(wrong, sig!.signature, k.jwk));
  });

  it('reads Signature-Agent in both forms', () => {
    assert.equal(readSignatureAgent('"https://a.example"', 'sig1'), 'https://a.example');
    assert.equal(readSignatureAgent('sig0="https://x.example", sig1="https://a.example"', 'sig1'), 'https://a.example');
    assert.equal(readSignatureAgent('sig2="https://a.example"', 'sig1'), undefined);
    assert.equal(readSignatureAgent('(((', 'sig1'), undefined);
    assert.equal(fieldComponentValue('sig1="https://a.example"', new Map([['key', 'sig1']])), '"https://a.example"');
  });

  it('our request signature verifies with Cloudflare web-bot-auth', async () => {
    const key = { privateKey: createPrivateKey({ key: RFC_KEY, format: 'jwk' }), keyid: ed25519Thumbprint(pub) };
    const now = Math.floor(Date.now() / 1000);
    const h = signRequest({ authority: 'shop.example', signatureAgent: 'https://agents.example/wba/a-0123456789ab', key, created: now, lifetimeSec: 60 });
    const request = new Request('https://shop.example/path', { headers: h });
    let seen = '';
    await verify(request, async (data, signature, params) => {
      seen = params.keyid;
      await (await verifierFromJWK(RFC_KEY))(data, signature, params);
    });
    assert.equal(seen, key.keyid);
    // Tampered agent address: refused by their verifier.
    const bad = new Request('https://shop.example/path', { headers: { ...h, 'Signature-Agent': '"https://evil.example"' } });
    await assert.rejects(verify(bad, await verifierFromJWK(RFC_KEY)));
  });

  it('a Cloudflare-signed request verifies with ours', async () => {
    const now = new Date();
    const request = new Request('https://shop.example/x', { headers: { 'Signature-Agent': '"https://agents.example/wba/a-0123456789ab"' } });
    const h = await signatureHeaders(request, await signerFromJWK({ ...RFC_KEY, kid: ed25519Thumbprint(pub) }), { created: now, expires: new Date(now.getTime() + 60_000) });
    const [sig] = readSignatures(h['Signature-Input'], h.Signature);
    assert.equal(sig?.params.tag, 'web-bot-auth');
    const base = signatureBase(sig!, (c) => (c.name === '@authority' ? 'shop.example' : fieldComponentValue('"https://agents.example/wba/a-0123456789ab"', c.params)));
    assert.ok(verifyEd25519(base, sig!.signature, pub));
  });
});
