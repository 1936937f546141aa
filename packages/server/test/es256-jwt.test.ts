import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, sign as nodeSign } from 'node:crypto';
import { SignJWT, decodeProtectedHeader, jwtVerify } from 'jose';
import { publicKeyOf, signEs256Jwt, verifyEs256Jwt } from '../src/crypto/es256-jwt.ts';

const NOW = 1_800_000_000;
const pair = () => generateKeyPairSync('ec', { namedCurve: 'P-256' });
const { privateKey, publicKey } = pair();
const other = pair();
const jwkOf = (k: typeof publicKey) => k.export({ format: 'jwk' }) as { kty: string; crv: string; x: string; y: string };
const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');
/** A compact JWS over any header and payload text, signed (r || s) by `key`. */
const raw = (header: unknown, payload: unknown, key = privateKey) => {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${nodeSign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
};
const claims = { iss: 'ag_x', sub: 'ag_x', type: 'agent', iat: NOW - 10, exp: NOW + 100 };
const H = { alg: 'ES256' };

/** What jose's jwtVerify says with the options the agent JWT check used (domain/agents/agent-jwt.ts before this change). */
async function jose(token: string): Promise<string> {
  try {
    await jwtVerify(token, publicKey, { algorithms: ['ES256'], currentDate: new Date(NOW * 1000), requiredClaims: ['iat', 'exp'] });
    return 'ok';
  } catch (e) {
    return (e as { code?: string }).code === 'ERR_JWT_EXPIRED' ? 'expired' : 'refused';
  }
}
function ours(token: string): string {
  try {
    verifyEs256Jwt(token, publicKeyOf(jwkOf(publicKey)), NOW);
    return 'ok';
  } catch (e) {
    return (e as { code?: string }).code === 'ERR_JWT_EXPIRED' ? 'expired' : 'refused';
  }
}

describe('ES256 JWTs on node:crypto (crypto/es256-jwt.ts)', () => {
  it('refuses and accepts exactly what jose jwtVerify does, expiry told apart', async () => {
    const good = raw(H, claims);
    const [h, p, s] = good.split('.') as [string, string, string];
    const derSig = nodeSign('sha256', Buffer.from(`${h}.${p}`), privateKey).toString('base64url');
    const cases: [string, string, string][] = [
      ['valid', good, 'ok'],
      ['valid, typ and kid in the header', raw({ alg: 'ES256', typ: 'JWT', kid: 'k' }, claims), 'ok'],
      ['exp now', raw(H, { ...claims, exp: NOW }), 'expired'],
      ['exp passed', raw(H, { ...claims, exp: NOW - 1 }), 'expired'],
      ['exp a second ahead', raw(H, { ...claims, exp: NOW + 1 }), 'ok'],
      ['no iat', raw(H, { ...claims, iat: undefined }), 'refused'],
      ['no exp', raw(H, { ...claims, exp: undefined }), 'refused'],
      ['iat a string', raw(H, { ...claims, iat: String(NOW) }), 'refused'],
      ['exp a string', raw(H, { ...claims, exp: String(NOW + 100) }), 'refused'],
      ['exp null', raw(H, { ...claims, exp: null }), 'refused'],
      ['nbf ahead', raw(H, { ...claims, nbf: NOW + 1 }), 'refused'],
      ['nbf now', raw(H, { ...claims, nbf: NOW }), 'ok'],
      ['nbf a string', raw(H, { ...claims, nbf: 'soon' }), 'refused'],
      ['signed by another key', raw(H, claims, other.privateKey), 'refused'],
      ['payload changed after signing', `${h}.${b64({ ...claims, sub: 'ag_y' })}.${s}`, 'refused'],
      ['signature DER-encoded', `${h}.${p}.${derSig}`, 'refused'],
      ['signature cut short', `${h}.${p}.${s.slice(0, -4)}`, 'refused'],
      ['signature with a character outside base64url', `${h}.${p}.${s.slice(0, 10)}+${s.slice(11)}`, 'refused'],
      ['no signature', `${h}.${p}.`, 'refused'],
      ['two segments', `${h}.${p}`, 'refused'],
      ['four segments', `${good}.${s}`, 'refused'],
      ['alg HS256', raw({ alg: 'HS256' }, claims), 'refused'],
      ['alg none', `${b64({ alg: 'none' })}.${p}.`, 'refused'],
      ['crit', raw({ alg: 'ES256', crit: ['exp'], exp: 1 }, claims), 'refused'],
      ['unencoded payload (b64 false)', raw({ alg: 'ES256', crit: ['b64'], b64: false }, claims), 'refused'],
      ['payload an array', raw(H, [claims]), 'refused'],
      ['payload not JSON', raw(H, 'not json'), 'refused'],
      ['header not JSON', raw('not json', claims), 'refused'],
      ['header an array', raw([H], claims), 'refused'],
    ];
    for (const [name, token, expected] of cases) {
      assert.equal(await jose(token), expected, `jose, ${name}`);
      assert.equal(ours(token), expected, name);
    }
  });

  it('signs what jose verifies, with the header jose would write', async () => {
    const payload = { iss: 'https://mandate.example', sub: 'ag_x', scope: ['a'], n: 1, exp: NOW + 600, iat: NOW, uni: 'ü ✓' };
    const token = signEs256Jwt(privateKey, { kid: 'k1', typ: 'at+jwt' }, payload);
    const { payload: verified, protectedHeader } = await jwtVerify(token, publicKey, { algorithms: ['ES256'], currentDate: new Date(NOW * 1000), typ: 'at+jwt' });
    assert.deepEqual(verified, payload);
    assert.deepEqual(protectedHeader, { alg: 'ES256', kid: 'k1', typ: 'at+jwt' });
    const joseToken = await new SignJWT(payload).setProtectedHeader({ alg: 'ES256', kid: 'k1', typ: 'at+jwt' }).sign(privateKey);
    assert.equal(token.split('.').slice(0, 2).join('.'), joseToken.split('.').slice(0, 2).join('.'), 'the same bytes up to the signature');
    assert.deepEqual(decodeProtectedHeader(token), decodeProtectedHeader(joseToken));
  });

  it('imports each distinct public key once, and a changed key is never answered from the cache', () => {
    const a = publicKeyOf(jwkOf(publicKey));
    assert.equal(publicKeyOf({ ...jwkOf(publicKey) }), a, 'the same members: the same KeyObject');
    const b = publicKeyOf(jwkOf(other.publicKey));
    assert.notEqual(b, a);
    const token = raw(H, claims);
    assert.deepEqual(verifyEs256Jwt(token, a, NOW), claims);
    assert.throws(() => verifyEs256Jwt(token, b, NOW), /signature verification failed/);
    // Same x, another y: another key (here not on the curve: refused at import).
    assert.throws(() => publicKeyOf({ ...jwkOf(publicKey), y: jwkOf(other.publicKey).y }));
  });
});
