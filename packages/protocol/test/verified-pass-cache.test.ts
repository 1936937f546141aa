import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { generateKeyPair } from 'jose';
import type { KeyResolver, VerifyPassOptions } from '../src/index.ts';
import { VerifiedPassCache, createDpopProof, keyResolverFromJwks, verifyPass, verifyPassAndProof } from '../src/index.ts';
import type { Agent, Service } from './helpers.ts';
import { ISSUER, KID, NOW, SITE, URL_, mintPass, newAgent, newService, passClaims, rejectsWith, signRaw } from './helpers.ts';

// The verified-pass cache may skip a pass's signature check only for a token it saw pass every
// check, with the same issuer and the same key; the clock, the audience and the proof still count
// on every call, and the cache stays bounded.

let agent: Agent;
let svc: Service;

before(async () => {
  agent = await newAgent();
  svc = await newService();
});

const opts = (passCache: VerifiedPassCache, over: Partial<VerifyPassOptions> = {}): VerifyPassOptions => ({ keys: svc.resolver, issuer: ISSUER, now: NOW, site: SITE, passCache, ...over });

describe('VerifiedPassCache', () => {
  it('remembers a verified pass and answers it from memory, with the same claims', async () => {
    const cache = new VerifiedPassCache();
    const token = await mintPass(svc, agent);
    const first = await verifyPass(token, opts(cache));
    assert.equal(cache.size, 1);
    assert.deepEqual(await cache.lookup(token, ISSUER, svc.resolver, NOW), first);
    assert.deepEqual(await verifyPass(token, opts(cache)), passClaims(agent));
  });

  it('hands out copies: a caller changing its claims does not change the next answer', async () => {
    const cache = new VerifiedPassCache();
    const token = await mintPass(svc, agent, { user_info: { 'user:name': 'Ada' } });
    const mine = await verifyPass(token, opts(cache));
    mine.scope.push('admin');
    mine.cnf.dpop = 'someone-else';
    if (mine.user_info) mine.user_info['user:name'] = 'Eve';
    const again = await verifyPass(token, opts(cache));
    assert.deepEqual(again.scope, ['orders:read']);
    assert.equal(again.cnf.dpop, agent.jkt);
    assert.deepEqual(again.user_info, { 'user:name': 'Ada' });
  });

  it('still refuses a cached pass once it has expired, and forgets it', async () => {
    const cache = new VerifiedPassCache();
    const token = await mintPass(svc, agent);
    const { exp } = await verifyPass(token, opts(cache));
    assert.ok(await verifyPass(token, opts(cache, { now: exp - 1 })));
    await rejectsWith(verifyPass(token, opts(cache, { now: exp })), 'token_expired');
    assert.equal(cache.size, 0);
  });

  it('still checks the audience of a cached pass on every call', async () => {
    const cache = new VerifiedPassCache();
    const token = await mintPass(svc, agent);
    await verifyPass(token, opts(cache));
    await rejectsWith(verifyPass(token, opts(cache, { site: 'other.example' })), 'wrong_site');
    await rejectsWith(verifyPass(token, opts(cache, { site: undefined, url: 'https://other.example/x' })), 'wrong_site');
  });

  it('does not count once the kid names another key, or no key: the signature is checked again and fails', async () => {
    const cache = new VerifiedPassCache();
    const token = await mintPass(svc, agent);
    await verifyPass(token, opts(cache));
    const { publicKey: otherKey } = await generateKeyPair('ES256');
    const swapped: KeyResolver = async (kid) => (kid === KID ? otherKey : undefined);
    await rejectsWith(verifyPass(token, opts(cache, { keys: swapped })), 'invalid_token');
    assert.equal(cache.size, 0, 'the stale entry is dropped');
    await verifyPass(token, opts(cache));
    const retired: KeyResolver = async () => undefined;
    await rejectsWith(verifyPass(token, opts(cache, { keys: retired })), 'invalid_token');
  });

  it('does not count for another issuer', async () => {
    const cache = new VerifiedPassCache();
    const token = await mintPass(svc, agent);
    await verifyPass(token, opts(cache));
    await rejectsWith(verifyPass(token, opts(cache, { issuer: 'https://evil.example' })), 'invalid_token');
  });

  it('recognises the same key in a JWKS document read afresh (keys compared by curve point)', async () => {
    const cache = new VerifiedPassCache();
    const token = await mintPass(svc, agent);
    const jwks = { keys: [svc.publicJwk] };
    await verifyPass(token, opts(cache, { keys: jwks }));
    assert.ok(await cache.lookup(token, ISSUER, keyResolverFromJwks(structuredClone(jwks)), NOW));
  });

  it('stores only passes that passed every check', async () => {
    const cache = new VerifiedPassCache();
    const good = await mintPass(svc, agent);
    const [h, p] = good.split('.');
    const badSignature = `${h}.${p}.${'A'.repeat(86)}`;
    const expired = await mintPass(svc, agent, { exp: NOW - 1 });
    const badShape = await signRaw({ typ: 'at+jwt', alg: 'ES256', kid: KID }, { ...passClaims(agent), scope: 'orders:read' }, svc.privateKey);
    const otherKey = (await generateKeyPair('ES256')).privateKey;
    const foreign = await signRaw({ typ: 'at+jwt', alg: 'ES256', kid: KID }, passClaims(agent), otherKey);
    for (const [token, code] of [[badSignature, 'invalid_token'], [expired, 'token_expired'], [badShape, 'invalid_token'], [foreign, 'invalid_token']] as const) {
      await rejectsWith(verifyPass(token, opts(cache)), code);
    }
    assert.equal(cache.size, 0);
  });

  it('is not used for reports (allowExpiredWithinSec)', async () => {
    const cache = new VerifiedPassCache();
    const token = await mintPass(svc, agent);
    await verifyPass(token, opts(cache, { allowExpiredWithinSec: 7 * 86_400 }));
    assert.equal(cache.size, 0);
  });

  it('holds at most maxEntries passes, dropping the least recently used', async () => {
    const cache = new VerifiedPassCache({ maxEntries: 3 });
    const tokens = await Promise.all([1, 2, 3, 4].map((n) => mintPass(svc, agent, { jti: `pass-${n}` })));
    const [t1, t2, t3, t4] = tokens as [string, string, string, string];
    for (const t of [t1, t2, t3]) await verifyPass(t, opts(cache));
    await verifyPass(t1, opts(cache)); // t1 used again: t2 is now the oldest
    await verifyPass(t4, opts(cache));
    assert.equal(cache.size, 3);
    assert.equal(await cache.lookup(t2, ISSUER, svc.resolver, NOW), undefined);
    for (const t of [t1, t3, t4]) assert.ok(await cache.lookup(t, ISSUER, svc.resolver, NOW));
  });

  it('refuses a size that is not a positive integer', () => {
    for (const maxEntries of [0, -1, 1.5, Number.NaN]) assert.throws(() => new VerifiedPassCache({ maxEntries }), RangeError);
  });

  it('in verifyPassAndProof, the proof, revocation and jti steps still run on every call', async () => {
    const cache = new VerifiedPassCache();
    const token = await mintPass(svc, agent);
    const seen = new Set<string>();
    let revocationChecks = 0;
    const input = (dpop: string, revoked = false) => ({
      accessToken: token,
      dpop,
      method: 'POST',
      url: URL_,
      site: SITE,
      now: NOW,
      keys: svc.resolver,
      issuer: ISSUER,
      passCache: cache,
      isRevoked: async () => {
        revocationChecks++;
        return revoked ? ('grant_revoked' as const) : null;
      },
      consumeJti: async (jti: string) => !seen.has(jti) && Boolean(seen.add(jti)),
    });
    const proof = (jti: string, who: Agent = agent) => createDpopProof(who.privateKey, who.publicJwk, { htm: 'POST', htu: URL_, accessToken: token, iat: NOW, jti });
    await verifyPassAndProof(input(await proof('first-request')));
    assert.equal(cache.size, 1);
    await verifyPassAndProof(input(await proof('second-request')));
    await rejectsWith(verifyPassAndProof(input(await proof('second-request'))), 'dpop_replay');
    await rejectsWith(verifyPassAndProof(input(await proof('third-request', await newAgent()))), 'dpop_key_mismatch');
    const [h, p] = (await proof('forged-signature')).split('.');
    await rejectsWith(verifyPassAndProof(input(`${h}.${p}.${'A'.repeat(86)}`)), 'invalid_dpop');
    await rejectsWith(verifyPassAndProof(input(await proof('fourth-request'), true)), 'grant_revoked');
    assert.equal(revocationChecks, 4);
    assert.deepEqual([...seen], ['first-request', 'second-request']);
  });
});
