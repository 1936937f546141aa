import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { generateAgentKeyPair } from '@mandate/protocol';
import { testApp, signUp, json, type TestApp } from './helpers/app.ts';

async function agentKey() {
  const { privateKey, publicJwk } = await generateAgentKeyPair();
  return { privateKey, jwk: publicJwk };
}

describe('agents', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp();
  });
  after(() => t.close());

  it('creates an agent from a JWK and lists it', async () => {
    const owner = await signUp(t.app);
    const { jwk } = await agentKey();
    const res = await t.app.inject({ method: 'POST', url: '/api/agents', headers: owner.auth, payload: { name: 'Shopper', jwk } });
    assert.equal(res.statusCode, 200);
    const agent = json<{ id: string; name: string; status: string; created_at: string }>(res);
    assert.match(agent.id, /^ag_[a-z2-7]{26}$/);
    assert.equal(agent.status, 'active');
    const list = json<{ id: string }[]>(await t.app.inject({ url: '/api/agents', headers: owner.auth }));
    assert.deepEqual(list.map((a) => a.id), [agent.id]);
  });

  it('creates an agent from a PEM public key', async () => {
    const owner = await signUp(t.app);
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pubkey = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const res = await t.app.inject({ method: 'POST', url: '/api/agents', headers: owner.auth, payload: { name: 'Pem', pubkey } });
    assert.equal(res.statusCode, 200, res.body);
  });

  it('refuses keys that are not public EC P-256 with 400', async () => {
    const owner = await signUp(t.app);
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const priv = await exportJWK(privateKey);
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' });
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const ed = generateKeyPairSync('ed25519');
    const { jwk } = await agentKey();
    const cases: Record<string, unknown>[] = [
      { name: 'a', jwk: priv },
      { name: 'a', jwk: { ...jwk, crv: 'P-384' } },
      { name: 'a', jwk: { kty: 'RSA', n: 'abc', e: 'AQAB' } },
      { name: 'a', jwk: { ...jwk, x: jwk.y?.replace(/./, 'A') } },
      { name: 'a', pubkey: p384.publicKey.export({ type: 'spki', format: 'pem' }).toString() },
      { name: 'a', pubkey: rsa.publicKey.export({ type: 'spki', format: 'pem' }).toString() },
      { name: 'a', pubkey: ed.publicKey.export({ type: 'spki', format: 'pem' }).toString() },
      { name: 'a', pubkey: p384.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() },
      { name: 'a', pubkey: 'not a pem' },
      { name: 'a' },
      { name: 'a', jwk, pubkey: 'both given' },
    ];
    for (const payload of cases) {
      const res = await t.app.inject({ method: 'POST', url: '/api/agents', headers: owner.auth, payload });
      assert.equal(res.statusCode, 400, `${JSON.stringify(payload).slice(0, 80)} -> ${res.statusCode} ${res.body}`);
      assert.equal(typeof json<{ detail: string }>(res).detail, 'string');
    }
    const privRes = await t.app.inject({ method: 'POST', url: '/api/agents', headers: owner.auth, payload: { name: 'a', jwk: priv } });
    assert.match(json<{ detail: string }>(privRes).detail, /private/);
  });

  it('flags and removes agents; another owner gets 404', async () => {
    const owner = await signUp(t.app);
    const other = await signUp(t.app);
    const { jwk } = await agentKey();
    const agent = json<{ id: string }>(await t.app.inject({ method: 'POST', url: '/api/agents', headers: owner.auth, payload: { name: 'Bot', jwk } }));
    assert.equal((await t.app.inject({ method: 'POST', url: `/api/agents/${agent.id}/flag`, headers: other.auth, payload: { flag: 'revoked' } })).statusCode, 404);
    assert.equal((await t.app.inject({ method: 'DELETE', url: `/api/agents/${agent.id}`, headers: other.auth })).statusCode, 404);
    const seq0 = await t.services.store.counters.current('rev_seq');
    const flagged = await t.app.inject({ method: 'POST', url: `/api/agents/${agent.id}/flag`, headers: owner.auth, payload: { flag: 'revoked' } });
    assert.equal(json<{ flag: string }>(flagged).flag, 'revoked');
    assert.equal(await t.services.store.counters.current('rev_seq'), seq0 + 1);
    assert.equal((await t.app.inject({ method: 'POST', url: `/api/agents/${agent.id}/flag`, headers: owner.auth, payload: { flag: 'bogus' } })).statusCode, 422);
    const unflagged = await t.app.inject({ method: 'POST', url: `/api/agents/${agent.id}/flag`, headers: owner.auth, payload: { flag: 'ok' } });
    assert.equal(json<{ flag: string }>(unflagged).flag, 'ok');
    assert.equal(await t.services.store.counters.current('rev_seq'), seq0 + 2);
    assert.equal((await t.app.inject({ method: 'DELETE', url: `/api/agents/${agent.id}`, headers: owner.auth })).statusCode, 200);
    assert.equal(await t.services.store.counters.current('rev_seq'), seq0 + 3);
    assert.deepEqual(json(await t.app.inject({ url: '/api/agents', headers: owner.auth })), []);
    assert.equal((await t.app.inject({ method: 'DELETE', url: `/api/agents/${agent.id}`, headers: owner.auth })).statusCode, 404);
  });

  describe('agent JWT verification (decisions §4)', () => {
    let owner: Awaited<ReturnType<typeof signUp>>;
    let key: Awaited<ReturnType<typeof agentKey>>;
    let agentId: string;
    const now = () => Math.floor(t.clock.now() / 1000);
    const sign = (claims: Record<string, unknown>, header: Record<string, unknown> = {}, k: CryptoKey = key.privateKey) =>
      new SignJWT(claims).setProtectedHeader({ alg: 'ES256', ...header }).sign(k);
    const good = () => ({ iss: agentId, sub: agentId, iat: now(), exp: now() + 300, type: 'agent' });

    before(async () => {
      owner = await signUp(t.app);
      key = await agentKey();
      agentId = json<{ id: string }>(await t.app.inject({ method: 'POST', url: '/api/agents', headers: owner.auth, payload: { name: 'J', jwk: key.jwk } })).id;
    });

    it('accepts a well-formed token', async () => {
      const agent = await t.services.agents.verifyJwt(await sign(good()), agentId);
      assert.equal(agent.id, agentId);
    });

    it('refuses bad tokens with 401', async () => {
      const other = await agentKey();
      const bad: [string, Promise<string> | string][] = [
        ['garbage', 'not.a.jwt'],
        ['empty', ''],
        ['alg none', `${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${Buffer.from(JSON.stringify(good())).toString('base64url')}.`],
        ['other key', sign(good(), {}, other.privateKey)],
        ['iss != sub', sign({ ...good(), sub: 'ag_other' })],
        ['other agent', sign({ ...good(), iss: 'ag_x', sub: 'ag_x' })],
        ['no exp', sign({ iss: agentId, sub: agentId, iat: now(), type: 'agent' })],
        ['expired', sign({ ...good(), iat: now() - 400, exp: now() - 1 })],
        ['too long', sign({ ...good(), exp: now() + 901 })],
        ['future iat', sign({ ...good(), iat: now() + 61, exp: now() + 300 })],
        ['wrong type', sign({ ...good(), type: 'access' })],
      ];
      for (const [label, token] of bad) {
        await assert.rejects(t.services.agents.verifyJwt(await token, agentId), (e: { status?: number }) => e.status === 401, label);
      }
      await t.services.agents.verifyJwt(await sign({ ...good(), iat: now() + 60, exp: now() + 960 }), agentId);
    });

    it('answers 403 "agent revoked by its owner" once the agent is revoked', async () => {
      await t.app.inject({ method: 'POST', url: `/api/agents/${agentId}/flag`, headers: owner.auth, payload: { flag: 'revoked' } });
      await assert.rejects(t.services.agents.verifyJwt(await sign(good()), agentId), (e: { status?: number; detail?: string }) => e.status === 403 && e.detail === 'agent revoked by its owner');
    });
  });
});
