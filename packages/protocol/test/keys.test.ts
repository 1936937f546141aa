import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { verifyPass } from '../src/index.ts';
import type { Agent, Service } from './helpers.ts';
import { ISSUER, KID, NOW, SITE, mintPass, newAgent, newService, rejectsWith } from './helpers.ts';

// Keys handed back as JWKs are imported once per curve point: a JWK changed in place, or a fresh JWK
// object of the same key, must verify exactly as a first import would.

let agent: Agent;
let svc: Service;

before(async () => {
  agent = await newAgent();
  svc = await newService();
});

describe('keys handed back as JWKs', () => {
  it('verify on every call, follow a JWK object changed in place or read afresh, refuse a point off the curve', async () => {
    const jwk: JWK = { ...svc.publicJwk };
    const keys = async (kid: string) => (kid === KID ? jwk : undefined);
    const token = await mintPass(svc, agent);
    for (let i = 0; i < 3; i++) assert.equal((await verifyPass(token, { keys, issuer: ISSUER, now: NOW, site: SITE })).aud, SITE);
    const other = await exportJWK((await generateKeyPair('ES256')).publicKey);
    jwk.x = other.x;
    jwk.y = other.y;
    await rejectsWith(verifyPass(token, { keys, issuer: ISSUER, now: NOW, site: SITE }), 'invalid_token');
    const fresh = async () => ({ ...svc.publicJwk });
    assert.equal((await verifyPass(token, { keys: fresh, issuer: ISSUER, now: NOW, site: SITE })).aud, SITE);
    const notOnCurve = async () => ({ ...svc.publicJwk, y: other.x });
    await rejectsWith(verifyPass(token, { keys: notOnCurve, issuer: ISSUER, now: NOW, site: SITE }), 'invalid_token');
  });
});
