import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { countLoopTurns } from './helpers/event-loop-turns.ts';
import { createHash } from 'node:crypto';
import { decodeJwt } from 'jose';
import { LIMITS, type PassClaims, type RevocationClaims, revocationVerdict, verifyRevocationSnapshot } from '@mandate/protocol';
import { seconds } from '../src/clock.ts';
import { RevocationSnapshots } from '../src/domain/revocation/snapshot.ts';
import { PAGE_ROWS } from '../src/domain/revocation/revocation-entries.ts';
import { newId } from '../src/domain/ids.ts';
import type { AgentRecord, GrantsRepo } from '../src/store/ports/index.ts';
import { expectStatus, json, signUp, type TestApp, testApp } from './helpers/app.ts';
import { createAgent, createGrant, revokeGrant, type TestAgent } from './helpers/agents.ts';
import { mintPass } from './helpers/passes.ts';
import { seedRevokedGrants } from './helpers/revocation-seed.ts';

/**
 * Issue 14, item 1: the revocation list stays small (decisions §25). An entry is listed while a pass
 * it refuses can still be alive, 600 s + 120 s after its revocation, removal or unblock; a blocked
 * agent stays. A list of 10 000 entries is built in steps that leave the event loop free.
 * The query plans: revocation-compaction-plans.test.ts; a real server and a local-mode site:
 * revocation-compaction-http.test.ts.
 */
const WINDOW_MS = (LIMITS.passLifetimeSec + 120) * 1000;
const SEEDED = 10_000;

interface Fetched {
  status: number;
  bytes: number;
  etag: string;
  body: { signature: string; rev_seq: number; revoked_agents: RevocationClaims['revoked_agents']; revoked_grants: RevocationClaims['revoked_grants'] };
  claims: RevocationClaims;
}

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`revocation list compaction (${backend})`, { timeout: 300_000 }, () => {
    let t: TestApp;
    let owner: Awaited<ReturnType<typeof signUp>>;
    let blocked: TestAgent;
    let removed: TestAgent;
    let victim: TestAgent;
    let seededAt = 0;
    let seededSeq = 0;

    const flag = async (agent: TestAgent, f: string) =>
      expectStatus(await t.app.inject({ method: 'POST', url: `/api/agents/${agent.id}/flag`, headers: owner.auth, payload: { flag: f } }), 200);

    /** GET /api/v1/revocation; a 200's signature verified and its signed content equal to the fields beside it. */
    async function fetchList(ifNoneMatch?: string): Promise<Fetched | { status: 304; etag: string }> {
      const res = await t.app.inject({ url: '/api/v1/revocation', headers: ifNoneMatch ? { 'if-none-match': ifNoneMatch } : {} });
      const etag = String(res.headers.etag);
      if (res.statusCode === 304) return { status: 304, etag };
      expectStatus(res, 200);
      const body = json<Fetched['body']>(res);
      const jwks = json<{ keys: Record<string, unknown>[] }>(await t.app.inject({ url: '/api/v1/jwks' }));
      const claims = await verifyRevocationSnapshot(body.signature, { keys: jwks, issuer: t.config.baseUrl, now: seconds(t.clock.now()) });
      assert.equal(claims.rev_seq, body.rev_seq);
      assert.deepEqual(claims.revoked_agents, body.revoked_agents);
      assert.deepEqual(claims.revoked_grants, body.revoked_grants);
      return { status: 200, bytes: res.rawPayload.length, etag, body, claims };
    }
    async function list(): Promise<Fetched> {
      const f = await fetchList();
      assert.equal(f.status, 200);
      return f as Fetched;
    }

    before(async () => {
      t = await testApp({ backend });
      owner = await signUp(t.app);
      blocked = await createAgent(t, owner, 'Blocked');
      await flag(blocked, 'revoked');
      removed = await createAgent(t, owner, 'Removed');
      expectStatus(await t.app.inject({ method: 'DELETE', url: `/api/agents/${removed.id}`, headers: owner.auth }), 200);
      victim = await createAgent(t, owner, 'Approved for made-up sites');
      seededAt = t.clock.now();
      seededSeq = await seedRevokedGrants(t.services.store, { userId: owner.user.id, agentId: victim.id, count: SEEDED, at: seededAt });
    });
    after(() => t.close());

    it('builds a list of 10 000 entries in steps, with the event loop free between them; requests meanwhile share the build', async () => {
      // Separate instances over the same store and key, so the app's cached build plays no part.
      const pages = { count: 0 };
      const counting: GrantsRepo = {
        ...t.services.store.grants,
        listRevoked: (now, page) => {
          pages.count++;
          return t.services.store.grants.listRevoked(now, page);
        },
      };
      const repos = { agents: t.services.store.agents, counters: t.services.store.counters, grants: counting };
      const one = await new RevocationSnapshots(repos, t.services.keys, t.clock, t.config.baseUrl).current();
      const pagesOfOneBuild = pages.count;
      assert.ok(pagesOfOneBuild >= Math.ceil(SEEDED / PAGE_ROWS), `${pagesOfOneBuild} pages`);

      pages.count = 0;
      const snapshots = new RevocationSnapshots(repos, t.services.keys, t.clock, t.config.baseUrl);
      const { result: built, turns } = await countLoopTurns(() => Promise.all(Array.from({ length: 5 }, () => snapshots.current())));
      // Each page read and each serialisation step lets the event loop turn (on SQLite a query runs
      // on it: one read of everything would not let it turn at all).
      assert.ok(turns >= 10, `the event loop turned ${turns} times during the build`);
      assert.equal(pages.count, pagesOfOneBuild, 'five requests at once made one build');
      for (const s of built) assert.equal(s, built[0]);
      assert.equal(built[0]?.etag, one.etag);
      assert.equal(built[0]?.revoked_grants.filter((g) => g.agent === victim.id).length, SEEDED);

      // Signed and served: the ETag is the one earlier releases computed (the same list gets the same
      // ETag on every node of a rolling upgrade), and the signed content is the body's.
      const f = await list();
      const { rev_seq, revoked_agents, revoked_grants } = f.body;
      assert.equal(f.etag, `"${createHash('sha256').update(JSON.stringify({ rev_seq, revoked_agents, revoked_grants })).digest('base64url')}"`);
      assert.equal(f.etag, one.etag);
      assert.ok(revoked_grants.some((g) => g.site.startsWith('bücher-€-𝄞-')));
    });

    it('10 000 revoked grants leave the list 720 s after their revocation, on time; rev_seq stays, a blocked agent stays, the ETag changes', async () => {
      const big = await list();
      const counter = await t.services.store.counters.current('rev_seq');
      assert.equal(big.body.rev_seq, counter);
      assert.equal(big.body.revoked_grants.filter((g) => g.agent === victim.id && g.rev_seq === seededSeq).length, SEEDED);
      assert.ok(big.body.revoked_agents.some((a) => a.id === removed.id), 'the tombstone is listed');
      const blockedEntry = big.body.revoked_agents.find((a) => a.id === blocked.id);
      assert.equal(blockedEntry?.flag, 'revoked');

      t.clock.set(seededAt + WINDOW_MS - 1);
      const last = await list();
      assert.equal(last.etag, big.etag, 'still listed 1 ms before the window ends');
      // 1 ms later, with the counter unchanged: the snapshot built just now must not be reused.
      t.clock.set(seededAt + WINDOW_MS);
      const small = await fetchList(big.etag);
      assert.equal(small.status, 200, 'the old ETag no longer matches');
      const s = small as Fetched;
      assert.notEqual(s.etag, big.etag);
      assert.equal(s.body.revoked_grants.some((g) => g.agent === victim.id), false);
      assert.equal(s.body.revoked_agents.some((a) => a.id === removed.id), false, 'the tombstone left too');
      assert.deepEqual(s.body.revoked_agents.find((a) => a.id === blocked.id), blockedEntry, 'a blocked agent stays listed');
      assert.equal(s.body.rev_seq, big.body.rev_seq, 'rev_seq did not go down (nor move)');
      assert.equal(await t.services.store.counters.current('rev_seq'), counter);
      assert.ok(big.bytes > 1_000_000 && s.bytes < 5_000, `${big.bytes} bytes, then ${s.bytes}`);
      assert.equal((await fetchList(s.etag)).status, 304);
      t.clock.advance(30 * 86_400_000);
      assert.deepEqual((await list()).body.revoked_agents.find((a) => a.id === blocked.id), blockedEntry, 'still blocked a month later: still listed');
    });

    it('a pass minted before a revocation or removal is refused while the entry is listed, and has expired when it leaves', async () => {
      const other = await signUp(t.app); // the first owner's session has expired in the month above
      const agent = await createAgent(t, other, 'Revoked at one site');
      const grant = await createGrant(t, agent, { site: 'shop.example' });
      const pass = decodeJwt(await mintPass(t, agent, 'shop.example')) as unknown as PassClaims;
      const gone = await createAgent(t, other, 'Removed later');
      const gonePass = decodeJwt(await mintPass(t, gone, 'shop.example')) as unknown as PassClaims;
      t.clock.advance(5_000);
      const revokedAt = t.clock.now();
      await revokeGrant(t, grant.id);
      expectStatus(await t.app.inject({ method: 'DELETE', url: `/api/agents/${gone.id}`, headers: other.auth }), 200);

      for (const at of [revokedAt, revokedAt + 600_000, revokedAt + WINDOW_MS - 1]) {
        t.clock.set(at);
        const { claims } = await list();
        assert.equal(revocationVerdict(pass, claims), 'grant_revoked', `at +${at - revokedAt} ms`);
        assert.equal(revocationVerdict(gonePass, claims), 'agent_revoked', `at +${at - revokedAt} ms`);
      }
      t.clock.set(revokedAt + WINDOW_MS);
      const { claims } = await list();
      assert.equal(revocationVerdict(pass, claims), null);
      // Left only once the pass had been expired for the whole clock allowance.
      assert.ok(pass.exp * 1000 + 120_000 <= revokedAt + WINDOW_MS);
      assert.ok(gonePass.exp * 1000 + 120_000 <= revokedAt + WINDOW_MS);
    });

    it('agents are read in pages too: 1 100 blocked agents stay listed, 1 100 tombstones leave after 720 s', async () => {
      const at = t.clock.now();
      const seq = await t.services.store.counters.next('rev_seq');
      const agent = (i: number, removed: boolean): AgentRecord => ({
        id: newId('ag'), userId: newId('u'), name: `many ${i}`, kind: 'agent', clientId: null, publicJwk: blocked.publicJwk, jkt: blocked.jkt, status: removed ? 'removed' : 'active',
        flag: removed ? 'ok' : 'revoked', flagRevSeq: seq, createdAt: at, removedAt: removed ? at : null, unblockedAt: null, unblockedRevSeq: null,
      });
      const many = Array.from({ length: 2200 }, (_, i) => agent(i, i % 2 === 1));
      for (let i = 0; i < many.length; i += 100) await Promise.all(many.slice(i, i + 100).map((a) => t.services.store.agents.create(a)));
      const listed = (f: Fetched) => new Set(f.body.revoked_agents.filter((a) => a.flag === 'revoked' && a.rev_seq === seq).map((a) => a.id));
      const before = listed(await list());
      assert.equal(many.filter((a) => before.has(a.id)).length, 2200);
      t.clock.set(at + WINDOW_MS);
      const later = listed(await list());
      assert.deepEqual(many.filter((a) => later.has(a.id)).map((a) => a.status), Array(1100).fill('active'));
    });
  });
}
