import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalJWKSet, jwtVerify, decodeProtectedHeader } from 'jose';
import { buildApp } from '../src/app.ts';
import { parseConfig } from '../src/config/config.ts';
import { FixedClock } from '../src/clock.ts';
import { openSqliteStore } from '../src/store/sqlite/open.ts';
import { testApp, signUp, json } from './helpers/app.ts';
import { verifyEmail } from './helpers/email-links.ts';

describe('signing keys', () => {
  const cleanups: (() => Promise<void>)[] = [];
  after(async () => {
    for (const c of cleanups) await c();
  });

  it('publishes one ES256 key on first start and signs with it', async () => {
    const t = await testApp();
    cleanups.push(t.close);
    const jwks = json<{ keys: { kid: string; alg: string; kty: string; crv: string; d?: string }[] }>(await t.app.inject({ url: '/api/v1/jwks' }));
    assert.equal(jwks.keys.length, 1);
    const [k] = jwks.keys;
    assert.equal(k?.alg, 'ES256');
    assert.equal(k?.crv, 'P-256');
    assert.equal(k?.d, undefined, 'no private part published');
    const token = await t.services.keys.sign({ sub: 'x', exp: Math.floor(t.clock.now() / 1000) + 60 }, 'at+jwt');
    assert.equal(decodeProtectedHeader(token).kid, k?.kid);
    await jwtVerify(token, createLocalJWKSet(jwks as never), { currentDate: new Date(t.clock.now()) });
  });

  it('rotates (admin only): new tokens get the new kid, the old kid stays verifiable for the grace window', async () => {
    const t = await testApp({ env: { ADMIN_EMAILS: 'root@example.com', KEY_ROTATION_GRACE_SECONDS: '3600' } });
    cleanups.push(t.close);
    const admin = await signUp(t.app, 'root@example.com');
    const user = await signUp(t.app);
    // An ADMIN_EMAILS address is admin only once proven (decisions §25).
    assert.equal((await t.app.inject({ method: 'POST', url: '/api/admin/keys/rotate', headers: admin.auth })).statusCode, 403);
    await verifyEmail(t, admin);
    assert.equal((await t.app.inject({ method: 'POST', url: '/api/admin/keys/rotate', headers: user.auth })).statusCode, 403);
    assert.equal((await t.app.inject({ method: 'POST', url: '/api/admin/keys/rotate' })).statusCode, 401);
    const oldToken = await t.services.keys.sign({ sub: 'old', exp: Math.floor(t.clock.now() / 1000) + 7200 }, 'at+jwt');
    const oldKid = decodeProtectedHeader(oldToken).kid;
    const res = await t.app.inject({ method: 'POST', url: '/api/admin/keys/rotate', headers: admin.auth });
    assert.equal(res.statusCode, 200, res.body);
    const rotated = json<{ kid: string; retired: string[]; grace_seconds: number }>(res);
    assert.notEqual(rotated.kid, oldKid);
    assert.deepEqual(rotated.retired, [oldKid]);
    const newToken = await t.services.keys.sign({ sub: 'new', exp: Math.floor(t.clock.now() / 1000) + 60 }, 'at+jwt');
    assert.equal(decodeProtectedHeader(newToken).kid, rotated.kid);
    const kids = () => t.app.inject({ url: '/api/v1/jwks' }).then((r) => json<{ keys: { kid: string }[] }>(r).keys.map((k) => k.kid));
    assert.deepEqual((await kids()).sort(), [oldKid, rotated.kid].sort());
    const set = createLocalJWKSet(json(await t.app.inject({ url: '/api/v1/jwks' })) as never);
    await jwtVerify(oldToken, set, { currentDate: new Date(t.clock.now()) });
    assert.ok(await t.services.keys.verificationKey(oldKid as string));
    t.clock.advance(3600 * 1000 + 1);
    assert.deepEqual(await kids(), [rotated.kid]);
    assert.equal(await t.services.keys.verificationKey(oldKid as string), undefined);
  });

  it('stores private keys encrypted with KEY_ENCRYPTION_KEY, encrypts old plaintext keys, and refuses to start without the secret', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mandate-keys-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const clock = new FixedClock();
    const start = async (env: Record<string, string>) => {
      const store = await openSqliteStore(dir);
      try {
        const built = await buildApp({ config: parseConfig({ DATA_DIR: dir, ...env }), store, clock, logger: false });
        const jwks = await built.services.keys.jwks();
        await built.services.keys.sign({ a: 1 }, 'at+jwt');
        await built.app.close();
        return { jwks, records: await store.signingKeys.list() };
      } finally {
        await store.close();
      }
    };
    const plain = await start({});
    assert.equal(plain.records[0]?.encrypted, false);
    const secret = 'a-long-operator-secret-value';
    const enc = await start({ KEY_ENCRYPTION_KEY: secret });
    assert.deepEqual(enc.jwks, plain.jwks, 'same key, now encrypted at rest');
    assert.equal(enc.records[0]?.encrypted, true);
    assert.doesNotMatch(enc.records[0]?.privateJwk ?? '', /"d"/);
    await assert.rejects(start({}), /KEY_ENCRYPTION_KEY/);
    await assert.rejects(start({ KEY_ENCRYPTION_KEY: 'another-secret-value-xx' }));
    assert.deepEqual((await start({ KEY_ENCRYPTION_KEY: secret })).jwks, plain.jwks);
  });
});
