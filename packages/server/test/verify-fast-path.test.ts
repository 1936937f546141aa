import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VerifiedPassCache } from '@mandate/protocol';
import { buildApp } from '../src/app.ts';
import { parseConfig } from '../src/config/config.ts';
import { FixedClock } from '../src/clock.ts';
import { CloudVerifier } from '../src/domain/verification/cloud-verify.ts';
import { openPostgresStore } from '../src/store/postgres/open.ts';
import type { Store } from '../src/store/ports/index.ts';
import { expectStatus, testApp, type TestApp } from './helpers/app.ts';
import { createAgent, createGrant, revokeGrant, type TestAgent } from './helpers/agents.ts';
import { getPass, proof, verify, verifyBody } from './helpers/passes.ts';
import { freshPostgresDatabase } from './helpers/postgres.ts';

// Cloud verify checks a pass's signature once per token on each node (VerifiedPassCache) and reuses
// a built revocation snapshot while the shared rev_seq stands still. Neither may ever let a revoked,
// expired or replayed request through, on the node that holds the cache or on any other.

const flag = (t: TestApp, agent: TestAgent, value: string) =>
  t.app.inject({ method: 'POST', url: `/api/agents/${agent.id}/flag`, headers: agent.owner.auth, payload: { flag: value } });

interface Snapshot {
  rev_seq: number;
  revoked_agents: { id: string }[];
  revoked_grants: { agent: string; site: string }[];
}
const snapshot = async (t: TestApp): Promise<Snapshot> => (await t.app.inject({ url: '/api/v1/revocation' })).json() as Snapshot;

describe('cloud verify with a warm pass cache', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp();
  });
  after(() => t.close());

  it('checks the signature once per pass, the proof, jti and revocation on every request', async () => {
    const agent = await createAgent(t);
    const grant = await createGrant(t, agent);
    const pass = (await getPass(t, agent)).access_token;
    const before = t.services.verifier.passCache.size;
    for (let i = 0; i < 3; i++) assert.equal((await verify(t, await verifyBody(t, agent, pass))).valid, true);
    assert.equal(t.services.verifier.passCache.size, before + 1, 'one entry for the pass');

    const used = await verifyBody(t, agent, pass);
    assert.equal((await verify(t, used)).valid, true);
    assert.equal((await verify(t, used)).error, 'dpop_replay');
    const stranger = await createAgent(t);
    assert.equal((await verify(t, { ...used, dpop: await proof(t, stranger, pass) })).error, 'dpop_key_mismatch');

    await revokeGrant(t, grant.id);
    assert.equal((await verify(t, await verifyBody(t, agent, pass))).error, 'grant_revoked');
  });

  it('refuses a cached pass at once when its agent is revoked, and once it has expired', async () => {
    const agent = await createAgent(t);
    await createGrant(t, agent);
    const pass = (await getPass(t, agent)).access_token;
    assert.equal((await verify(t, await verifyBody(t, agent, pass))).valid, true);
    const other = await createAgent(t);
    await createGrant(t, other);
    const otherPass = (await getPass(t, other)).access_token;
    assert.equal((await verify(t, await verifyBody(t, other, otherPass))).valid, true);

    expectStatus(await flag(t, agent, 'revoked'), 200);
    assert.equal((await verify(t, await verifyBody(t, agent, pass))).error, 'agent_revoked');

    t.clock.advance(600_000);
    assert.equal((await verify(t, await verifyBody(t, other, otherPass))).error, 'token_expired');
  });

  it('holds at most maxEntries passes', async () => {
    const passCache = new VerifiedPassCache({ maxEntries: 2 });
    const verifier = new CloudVerifier({ store: t.services.store, keys: t.services.keys, clock: t.clock, activity: t.services.activity, issuer: t.config.baseUrl, passCache });
    for (let i = 0; i < 3; i++) {
      const agent = await createAgent(t);
      await createGrant(t, agent);
      const pass = (await getPass(t, agent)).access_token;
      const body = await verifyBody(t, agent, pass);
      assert.equal((await verifier.verify({ accessToken: body.access_token, dpop: body.dpop, method: body.method, url: body.url })).valid, true);
    }
    assert.equal(passCache.size, 2);
  });
});

describe('revocation snapshot reuse', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp();
  });
  after(() => t.close());

  it('shows a revocation at once, though nothing but the counter changed (same clock time)', async () => {
    const agent = await createAgent(t);
    const grant = await createGrant(t, agent);
    const before = await snapshot(t);
    assert.equal(before.revoked_grants.some((g) => g.agent === agent.id), false);
    await revokeGrant(t, grant.id);
    const after = await snapshot(t);
    assert.ok(after.rev_seq > before.rev_seq);
    assert.equal(after.revoked_grants.some((g) => g.agent === agent.id), true);
  });

  it('reuses a built snapshot while the counter stands still, for at most 5 s', async () => {
    const agent = await createAgent(t);
    const grant = await createGrant(t, agent);
    await snapshot(t);
    // A change written without advancing rev_seq (no writer of the service does this).
    await t.services.store.grants.revoke(grant.id, t.clock.now(), await t.services.store.counters.current('rev_seq'));
    assert.equal((await snapshot(t)).revoked_grants.some((g) => g.agent === agent.id), false, 'the built snapshot is reused');
    t.clock.advance(5_000);
    assert.equal((await snapshot(t)).revoked_grants.some((g) => g.agent === agent.id), true);
  });
});

describe('two nodes over one PostgreSQL database, caches warm on both', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mandate-two-nodes-'));
  const clock = new FixedClock();
  const config = parseConfig({ BASE_URL: 'http://localhost:8080', DATA_DIR: dir, LOG_LEVEL: 'silent' });
  let db: { url: string; drop: () => Promise<void> };
  const stores: Store[] = [];
  let a: TestApp;
  let b: TestApp;

  const node = async (): Promise<TestApp> => {
    const store = await openPostgresStore(db.url);
    stores.push(store);
    const built = await buildApp({ config, store, clock, logger: false });
    await built.app.ready();
    return { ...built, clock, config, close: () => built.app.close() };
  };

  before(async () => {
    db = await freshPostgresDatabase();
    a = await node();
    b = await node();
  });
  after(async () => {
    await a.close();
    await b.close();
    for (const s of stores) await s.close();
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a revocation made on one node is refused at once by the other, in verify and in the snapshot', async () => {
    const agent = await createAgent(a);
    const grant = await createGrant(a, agent);
    const pass = (await getPass(a, agent)).access_token;
    for (const n of [a, b]) {
      assert.equal((await verify(n, await verifyBody(n, agent, pass))).valid, true);
      await snapshot(n);
    }
    await revokeGrant(a, grant.id);
    assert.equal((await verify(b, await verifyBody(b, agent, pass))).error, 'grant_revoked');
    assert.equal((await snapshot(b)).revoked_grants.some((g) => g.agent === agent.id), true);

    const second = await createAgent(a);
    await createGrant(a, second);
    const secondPass = (await getPass(a, second)).access_token;
    assert.equal((await verify(b, await verifyBody(b, second, secondPass))).valid, true);
    expectStatus(await flag(a, second, 'revoked'), 200);
    assert.equal((await verify(b, await verifyBody(b, second, secondPass))).error, 'agent_revoked');
    assert.equal((await snapshot(b)).revoked_agents.some((x) => x.id === second.id), true);
  });
});
