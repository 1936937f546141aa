import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { decodeJwt } from 'jose';
import { createAgentJwt } from '@mandate/protocol';
import { KeyEncryption } from '../src/crypto/key-encryption.ts';
import { OidcSecret, loadOidcSecret } from '../src/crypto/oidc-secret.ts';
import { FixedClock, seconds } from '../src/clock.ts';
import { base32 } from '../src/domain/ids.ts';
import type { ServiceSecretRecord, ServiceSecretsRepo } from '../src/store/ports/index.ts';
import { expectStatus, json, signUp, testApp, type TestApp } from './helpers/app.ts';
import { createAgent, createGrant, type TestAgent } from './helpers/agents.ts';

// Pairwise identifiers (decisions §1, §18): the `sub` and `act.sub` a site gets are an HMAC of the
// service's OIDC secret over (client host, id). Properties of OidcSecret.pairwise over random ids and
// hosts, of the secret as stored and opened again, and, end to end, of the ID tokens two sites get.

/** The service_secrets table in memory, with the store's first-writer-wins put. */
class MemorySecrets implements ServiceSecretsRepo {
  readonly rows = new Map<string, ServiceSecretRecord>();
  async putIfAbsent(secret: ServiceSecretRecord): Promise<ServiceSecretRecord> {
    const had = this.rows.get(secret.name);
    if (had) return had;
    this.rows.set(secret.name, { ...secret });
    return secret;
  }
  async get(name: string): Promise<ServiceSecretRecord | undefined> {
    const r = this.rows.get(name);
    return r ? { ...r } : undefined;
  }
  async replace(name: string, value: string, encrypted: boolean): Promise<void> {
    const r = this.rows.get(name);
    if (r) this.rows.set(name, { ...r, value, encrypted });
  }
}

const clock = new FixedClock(Date.UTC(2025, 0, 1));
const BASE64URL_SHA256 = /^[A-Za-z0-9_-]{43}$/;

const label = fc.stringMatching(/^[a-z0-9](?:[a-z0-9-]{0,14}[a-z0-9])?$/);
/** A redirect URI's host as URL.host spells it: lower-case labels, an optional port. */
const host = fc
  .tuple(fc.array(label, { minLength: 1, maxLength: 3 }), fc.constantFrom('example', 'test', 'shop', 'co.uk'), fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined }))
  .map(([labels, tld, port]) => `${labels.join('.')}.${tld}${port === undefined ? '' : `:${port}`}`);
/**
 * Ids as the service makes them (`u_...`, `ag_...`: 128 bits in base32), and any other Unicode text
 * of 8+ characters (shorter strings may turn up inside a 43-character value by chance).
 */
const id = fc.oneof(
  fc.tuple(fc.constantFrom('u', 'ag'), fc.uint8Array({ minLength: 16, maxLength: 16 })).map(([p, b]) => `${p}_${base32(b)}`),
  fc.string({ minLength: 8, maxLength: 80, unit: 'grapheme' }),
);
const secretBytes = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b));

describe('OidcSecret.pairwise: properties', () => {
  it('is stable (same inputs, same answer) and is 43 URL-safe characters (base64url of SHA-256) that never are, nor contain, the raw id', () => {
    fc.assert(fc.property(secretBytes, host, id, (secret, h, i) => {
      const s = new OidcSecret(secret);
      const p = s.pairwise(h, i);
      assert.equal(s.pairwise(h, i), p);
      assert.equal(new OidcSecret(Buffer.from(secret)).pairwise(h, i), p, 'another instance over the same secret');
      assert.match(p, BASE64URL_SHA256);
      assert.notEqual(p, i);
      assert.ok(!p.includes(i), `${p} contains ${i}`);
    }), { numRuns: 500 });
  });

  it('differs per host for the same id, and per id at the same host', () => {
    fc.assert(fc.property(secretBytes, fc.uniqueArray(host, { minLength: 2, maxLength: 2 }), id, (secret, [h1, h2], i) => {
      const s = new OidcSecret(secret);
      assert.notEqual(s.pairwise(h1 ?? '', i), s.pairwise(h2 ?? '', i));
    }), { numRuns: 500 });
    fc.assert(fc.property(secretBytes, host, fc.uniqueArray(id, { minLength: 2, maxLength: 2 }), (secret, h, [i1, i2]) => {
      const s = new OidcSecret(secret);
      assert.notEqual(s.pairwise(h, i1 ?? ''), s.pairwise(h, i2 ?? ''));
    }), { numRuns: 500 });
  });

  it('keeps host and id apart: moving characters across the boundary ("a|b", "c" against "a", "b|c") gives another value', () => {
    fc.assert(fc.property(secretBytes, host, fc.string({ minLength: 1, maxLength: 20 }), id, (secret, h, moved, i) => {
      const s = new OidcSecret(secret);
      // The same concatenation host + "|" + id, split in two places.
      assert.notEqual(s.pairwise(`${h}|${moved}`, i), s.pairwise(h, `${moved}|${i}`));
    }), { numRuns: 300 });
  });

  it('two different service secrets give different values for the same host and id', () => {
    fc.assert(fc.property(fc.uniqueArray(secretBytes, { minLength: 2, maxLength: 2, selector: (b) => b.toString('hex') }), host, id, ([a, b], h, i) => {
      assert.ok(a && b);
      assert.notEqual(new OidcSecret(a).pairwise(h, i), new OidcSecret(b).pairwise(h, i));
    }), { numRuns: 300 });
  });

  it('is not a plain hash of the inputs: it needs the secret', () => {
    fc.assert(fc.property(secretBytes, host, id, (secret, h, i) => {
      const p = new OidcSecret(secret).pairwise(h, i);
      for (const guess of [`${h}|${i}`, `${h.length}:${h}|${i}`, `${h}${i}`]) assert.notEqual(p, createHash('sha256').update(guess).digest('base64url'));
    }), { numRuns: 100 });
  });
});

describe('OidcSecret as stored: opened again on the same store, the same identifiers', () => {
  it('a fresh instance over the stored secret answers as the first one; a second store (another secret) differs', async () => {
    await fc.assert(fc.asyncProperty(fc.array(fc.tuple(host, id), { minLength: 1, maxLength: 10 }), async (pairs) => {
      const repo = new MemorySecrets();
      const first = await loadOidcSecret(repo, null, clock);
      const again = await loadOidcSecret(repo, null, clock);
      const other = await loadOidcSecret(new MemorySecrets(), null, clock);
      for (const [h, i] of pairs) {
        assert.equal(again.pairwise(h, i), first.pairwise(h, i));
        assert.notEqual(other.pairwise(h, i), first.pairwise(h, i));
      }
    }), { numRuns: 30 });
  });

  it('with KEY_ENCRYPTION_KEY: stored encrypted, the same identifiers when reopened, and when a plain secret is encrypted later', async () => {
    const encryption = new KeyEncryption(randomBytes(32).toString('base64url'));
    await fc.assert(fc.asyncProperty(host, id, async (h, i) => {
      const repo = new MemorySecrets();
      const first = await loadOidcSecret(repo, encryption, clock);
      const stored = repo.rows.get('oidc');
      assert.equal(stored?.encrypted, true);
      assert.equal((await loadOidcSecret(repo, encryption, clock)).pairwise(h, i), first.pairwise(h, i));

      // A service that ran without the key, then got one: the secret is encrypted in place, unchanged.
      const plain = new MemorySecrets();
      const before = await loadOidcSecret(plain, null, clock);
      const after = await loadOidcSecret(plain, encryption, clock);
      assert.equal(plain.rows.get('oidc')?.encrypted, true);
      assert.equal(after.pairwise(h, i), before.pairwise(h, i));
      await assert.rejects(loadOidcSecret(plain, null, clock), /encrypted/);
    }), { numRuns: 10 });
  });
});

describe('pairwise subjects in ID tokens (in-process app)', () => {
  let t: TestApp;
  let owner: Awaited<ReturnType<typeof signUp>>;
  let agent: TestAgent;
  let siteOwner: Awaited<ReturnType<typeof signUp>>;
  const base = 'http://localhost:8080';

  before(async () => {
    t = await testApp({ clock: new FixedClock(Date.now()) });
    owner = await signUp(t.app);
    agent = await createAgent(t, owner, 'Shopper');
    siteOwner = await signUp(t.app);
  });
  after(() => t.close());

  /** Hosts that have a grant already (fast-check may draw a host again). */
  const granted = new Set<string>();
  const grantAt = async (h: string) => {
    if (granted.has(h)) return;
    granted.add(h);
    await createGrant(t, agent, { site: h, scopes: ['openid'] });
  };

  const pkce = () => {
    const verifier = randomBytes(32).toString('base64url');
    return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
  };

  /** A public client with one https redirect URI at `h`. */
  const register = async (h: string): Promise<{ clientId: string; redirectUri: string }> => {
    const redirectUri = `https://${h}/cb`;
    const res = await t.app.inject({ method: 'POST', url: '/api/oidc/clients', headers: siteOwner.auth, payload: { name: `Site ${h}`, redirect_uris: [redirectUri], public: true } });
    expectStatus(res, 200);
    return { clientId: json<{ client_id: string }>(res).client_id, redirectUri };
  };

  /** One sign-in through the client: authorize with the agent header (a live grant answers a code at once), then the code at /oidc/token. */
  const signIn = async (c: { clientId: string; redirectUri: string }): Promise<{ sub: string; act: { sub: string } }> => {
    const { verifier, challenge } = pkce();
    const query = new URLSearchParams({ client_id: c.clientId, redirect_uri: c.redirectUri, response_type: 'code', scope: 'openid', code_challenge: challenge, code_challenge_method: 'S256' });
    const path = `/oidc/authorize?${query.toString()}`;
    const header = await createAgentJwt(agent.privateKey, agent.id, { iat: seconds(t.clock.now()), lifetimeSec: 60, jti: randomBytes(12).toString('base64url'), htu: `${base}${path}` });
    const res = await t.app.inject({ method: 'GET', url: path, headers: { 'x-service-agent': header } });
    assert.equal(res.statusCode, 302, res.body);
    const code = new URL(String(res.headers.location)).searchParams.get('code');
    assert.ok(code, String(res.headers.location));
    const token = await t.app.inject({
      method: 'POST', url: '/oidc/token', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: c.redirectUri, code_verifier: verifier, client_id: c.clientId }).toString(),
    });
    expectStatus(token, 200);
    const claims = decodeJwt(json<{ id_token: string }>(token).id_token);
    return { sub: String(claims.sub), act: claims.act as { sub: string } };
  };

  it('for the same owner and agent: the same sub (and act.sub) through one client every time, another at another host; the same as pairwise(host, id) of the stored secret', async () => {
    const secret = await loadOidcSecret(t.services.store.serviceSecrets, null, clock);
    await fc.assert(fc.asyncProperty(fc.uniqueArray(host, { minLength: 2, maxLength: 2 }), async ([hA, hB]) => {
      assert.ok(hA && hB);
      const a = await register(hA);
      const b = await register(hB);
      await grantAt(hA);
      await grantAt(hB);
      const a1 = await signIn(a);
      const a2 = await signIn(a);
      const b1 = await signIn(b);
      assert.equal(a2.sub, a1.sub, 'the same sub through the same client');
      assert.equal(a2.act.sub, a1.act.sub, 'the same act.sub through the same client');
      assert.notEqual(b1.sub, a1.sub, 'another sub at another host');
      assert.notEqual(b1.act.sub, a1.act.sub, 'another act.sub at another host');
      assert.notEqual(a1.sub, a1.act.sub, 'the person and the agent are told apart');
      for (const v of [a1.sub, a1.act.sub, b1.sub, b1.act.sub]) assert.match(v, BASE64URL_SHA256);
      assert.ok(![a1.sub, a1.act.sub, b1.sub, b1.act.sub].some((v) => v === owner.user.id || v === agent.id || v.includes(agent.id)));
      assert.equal(a1.sub, secret.pairwise(hA, owner.user.id));
      assert.equal(a1.act.sub, secret.pairwise(hA, agent.id));
      assert.equal(b1.sub, secret.pairwise(hB, owner.user.id));
    }), { numRuns: 8 });
  });

  it('two clients at the same host (the pairwise sector is the host) give the same sub', async () => {
    const h = 'same-host.example';
    await grantAt(h);
    const one = await signIn(await register(h));
    const two = await signIn(await register(h));
    assert.equal(two.sub, one.sub);
    assert.equal(two.act.sub, one.act.sub);
  });
});
