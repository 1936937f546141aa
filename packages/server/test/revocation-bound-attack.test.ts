import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { LIMITS, type PassClaims, type RevocationClaims, RevocationIndex } from '@mandate/protocol';
import { RevocationSnapshots, type Snapshot } from '../src/domain/revocation/snapshot.ts';
import { AGENT_LIMITS } from '../src/domain/agents/agents.ts';
import { newId } from '../src/domain/ids.ts';
import { expectStatus, signUp, type TestApp, testApp } from './helpers/app.ts';
import { createAgent, createGrant, revokeGrant, type Owner, type TestAgent } from './helpers/agents.ts';
import { mintPass } from './helpers/passes.ts';
import { seedBlockedAgents } from './helpers/revocation-seed.ts';

/**
 * Issue 22, the attack in process: many accounts each list their maximum of agents (100 live) as
 * blocked for good. With the bound scaled down to CAP (the served list's own bound, 10 000, is
 * exercised against a real server in revocation-bound-http.test.ts), the list stays within it, every
 * other owner's fresh revocations and their long-blocked agents stay listed ahead of the hostile
 * accounts', and an ordinary owner's revocation still refuses a live pass at a local verifier.
 */
const WINDOW_MS = (LIMITS.passLifetimeSec + 120) * 1000;
const CAP = 500;
const HOSTILE = 30;

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`revocation list bound under a mass sign-up (${backend})`, { timeout: 300_000 }, () => {
    let t: TestApp;
    let snapshots: RevocationSnapshots;
    const hostile = new Map<string, string[]>();
    let hostileFresh: string[] = [];
    let alice: Owner;
    const aliceBlocked: TestAgent[] = [];
    let bob: Owner;
    let bobAgent: TestAgent;
    let carolAgent: TestAgent;
    let carolGrant: string;

    const flag = async (owner: Owner, agent: TestAgent, f: string) =>
      expectStatus(await t.app.inject({ method: 'POST', url: `/api/agents/${agent.id}/flag`, headers: owner.auth, payload: { flag: f } }), 200);
    const passOf = async (agent: TestAgent, site: string) => decodeJwt(await mintPass(t, agent, site)) as unknown as PassClaims;
    const contentOf = (s: Snapshot): RevocationClaims => ({ type: 'revocation', iss: t.config.baseUrl, iat: 0, rev_seq: s.rev_seq, revoked_agents: s.revoked_agents, revoked_grants: s.revoked_grants });

    before(async () => {
      t = await testApp({ backend });
      // The app's own service with the bound scaled down: same store, keys and clock.
      snapshots = new RevocationSnapshots(t.services.store, t.services.keys, t.clock, t.config.baseUrl, CAP);
      const start = t.clock.now();

      // An ordinary owner blocks three agents for good, through the owner API.
      alice = await signUp(t.app);
      for (let i = 0; i < 3; i++) {
        const a = await createAgent(t, alice, `Retired ${i}`);
        await flag(alice, a, 'revoked');
        aliceBlocked.push(a);
      }
      // The hostile accounts: each its maximum of live agents, all blocked, at about the same time.
      for (let i = 0; i < HOSTILE; i++) {
        const userId = newId('u');
        hostile.set(userId, await seedBlockedAgents(t.services.store, { userId, count: AGENT_LIMITS.livePerOwner, at: start }));
      }
      // Past the window: every block above now refuses no live pass.
      t.clock.set(start + WINDOW_MS + 1_000);

      // Now, in the window: one more hostile account blocks all its agents, an ordinary owner blocks an
      // agent that holds a live pass, and another revokes a grant whose pass is live.
      const lateHostile = newId('u');
      hostileFresh = await seedBlockedAgents(t.services.store, { userId: lateHostile, count: AGENT_LIMITS.livePerOwner, at: t.clock.now() });
      bob = await signUp(t.app);
      bobAgent = await createAgent(t, bob, 'Runaway');
      await createGrant(t, bobAgent, { site: 'shop.example' });
      carolAgent = await createAgent(t, undefined, 'Shopper');
      carolGrant = (await createGrant(t, carolAgent, { site: 'shop.example' })).id;
    });
    after(() => t.close());

    it('the list stays within the bound; other owners keep every entry; the hostile accounts share what is left', async () => {
      const bobPass = await passOf(bobAgent, 'shop.example');
      const carolPass = await passOf(carolAgent, 'shop.example');
      const before = await snapshots.current();
      assert.equal(new RevocationIndex(contentOf(before)).verdict(bobPass), null, 'a live pass, not yet revoked');

      t.clock.advance(1_000);
      await flag(bob, bobAgent, 'revoked');
      await revokeGrant(t, carolGrant);
      const s = await snapshots.current();
      const listed = new Map(s.revoked_agents.map((a) => [a.id, a]));

      // The bound: the aged blocks listed are at most CAP; what is in the window is all there.
      const hostileAged = [...hostile.values()].flat();
      const agedListed = [...hostileAged, ...aliceBlocked.map((a) => a.id)].filter((id) => listed.has(id));
      assert.equal(agedListed.length, CAP, `${agedListed.length} aged blocks listed, of ${hostileAged.length + 3}`);
      assert.equal(s.revoked_agents.length, CAP + hostileFresh.length + 1, 'the bound plus the blocks of the window');
      for (const id of hostileFresh) assert.ok(listed.has(id), 'a block in the window is never dropped, not even a hostile one');

      // Every other owner's entries survive ahead of the hostile accounts'.
      for (const a of aliceBlocked) assert.equal(listed.get(a.id)?.flag, 'revoked', 'an ordinary owner\'s long-blocked agent stays listed');
      assert.equal(listed.get(bobAgent.id)?.flag, 'revoked');
      assert.ok(s.revoked_grants.some((g) => g.agent === carolAgent.id && g.site === 'shop.example'));
      // The hostile accounts share the rest evenly: (500 - 3) / 30 = 16 each, and 17 for 17 of them.
      const perAccount = [...hostile.values()].map((ids) => ids.filter((id) => listed.has(id)).length);
      assert.deepEqual([...new Set(perAccount)].sort(), [16, 17]);
      assert.equal(perAccount.reduce((x, y) => x + y, 0), CAP - 3);
      // Within an account, the newest blocks are the ones kept.
      for (const ids of hostile.values()) {
        const kept = ids.filter((id) => listed.has(id)).length;
        assert.ok(ids.slice(0, kept).every((id) => listed.has(id)), 'the newest blocks of each account');
      }

      // The ordinary owners' revocations refuse their live passes at a local verifier, at once.
      const index = new RevocationIndex(contentOf(s));
      assert.equal(index.verdict(bobPass), 'agent_revoked');
      assert.equal(index.verdict(carolPass), 'grant_revoked');
      assert.ok(s.rev_seq > before.rev_seq, 'rev_seq only grows');
    });

    it('when a dropped agent is unblocked or a kept one leaves, the list stays within the bound and rev_seq only grows', async () => {
      const s1 = await snapshots.current();
      // A hostile account unblocks one of its listed agents: its lifted block is listed for the window
      // (it is not a courtesy entry), and the freed place goes to another aged block.
      const [, firstIds] = [...hostile.entries()][0] ?? ['', []];
      const listed = new Set(s1.revoked_agents.map((a) => a.id));
      const victim = firstIds.find((id) => listed.has(id));
      assert.ok(victim);
      const seq = await t.services.store.transaction(async (repos) => {
        const revSeq = await repos.counters.next('rev_seq');
        await repos.agents.update(victim, { flag: 'ok', flagRevSeq: null, flaggedAt: null, unblockedAt: t.clock.now(), unblockedRevSeq: revSeq - 1 });
        return revSeq;
      });
      t.clock.advance(10);
      const s2 = await snapshots.current();
      assert.equal(s2.rev_seq, seq);
      const aged = new Set([...hostile.values()].flat().concat(aliceBlocked.map((a) => a.id)));
      assert.equal(s2.revoked_agents.filter((a) => aged.has(a.id) && a.id !== victim).length, CAP);
      assert.equal(s2.revoked_agents.find((a) => a.id === victim)?.flag, 'revoked', 'listed for the window after its unblock');

      // Once the window has passed for everything, the old code would list every block: the bound holds.
      t.clock.advance(WINDOW_MS);
      const s3 = await snapshots.current();
      assert.ok(s3.rev_seq >= s2.rev_seq);
      assert.equal(s3.revoked_agents.length, CAP, 'all blocks are aged now: the list is the bound');
      assert.ok(aliceBlocked.every((a) => s3.revoked_agents.some((e) => e.id === a.id)));
      assert.ok(s3.revoked_agents.some((e) => e.id === bobAgent.id), 'bob blocked his agent for good: it stays, as a courtesy');
      assert.ok(hostileFresh.some((id) => !s3.revoked_agents.some((e) => e.id === id)), 'the late hostile account is cut down like the others');
    });
  });
}
