import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AgentRecord, AuthzRequestRecord, GrantRecord, RevokedAgentRow } from '../../src/store/ports/index.ts';
import { type OpenStore, useStore } from './use-store.ts';

let n = 0;
const uniq = (p: string): string => `${p}${Date.now().toString(36)}${(n++).toString(36)}`;

/** The storage contract, written once and run against every backend. */
export function storeContract(name: string, open: OpenStore): void {
  describe(`store contract: ${name}`, () => {
    const store = useStore(open);

    const newUser = async (email = `${uniq('u')}@example.com`) => {
      const user = { id: uniq('u_'), email, displayName: 'Ann', passwordHash: 'h', phone: null, phoneVerified: false, createdAt: 1000 };
      assert.equal(await store.users.create(user), true);
      return user;
    };

    /** An active agent record of `u` (not stored). */
    const agentOf = (u: { id: string }): AgentRecord => ({
      id: uniq('ag_'), userId: u.id, name: 'Bot', kind: 'agent', clientId: null, publicJwk: { kty: 'EC', crv: 'P-256', x: 'x', y: 'y' }, jkt: 'j',
      status: 'active', flag: 'ok', flagRevSeq: null, createdAt: 5, removedAt: null, unblockedAt: null, unblockedRevSeq: null,
    });
    /** An active grant of `agent` for shop.example (not stored). */
    const grantOf = (agent: AgentRecord): GrantRecord => ({
      id: uniq('gr_'), userId: agent.userId, agentId: agent.id, site: 'shop.example', scopes: ['list'], userInfo: [], status: 'active',
      createdAt: 1, expiresAt: null, usesLeft: null, refreshHash: null, passesIssued: 0, revokedAt: null, revSeq: null, supersededAt: null, resource: null,
    });

    it('pings', async () => {
      await store.ping();
    });

    it('creates users, refuses a taken email, updates', async () => {
      const u = await newUser();
      assert.equal(await store.users.create({ ...u, id: uniq('u_') }), false);
      assert.deepEqual(await store.users.byEmail(u.email), { ...u, emailVerified: false });
      await store.users.update(u.id, { displayName: 'Bea', phoneVerified: true });
      const got = await store.users.byId(u.id);
      assert.equal(got?.displayName, 'Bea');
      assert.equal(got?.phoneVerified, true);
      assert.equal(await store.users.byId('u_missing'), undefined);
    });

    it('keeps sessions until they expire or are deleted', async () => {
      const u = await newUser();
      const h = uniq('s');
      await store.sessions.create({ tokenHash: h, userId: u.id, createdAt: 1000, expiresAt: 5000, method: 'password' });
      assert.equal((await store.sessions.live(h, 4999))?.userId, u.id);
      assert.equal(await store.sessions.live(h, 5000), undefined);
      await store.sessions.delete(h);
      assert.equal(await store.sessions.live(h, 1), undefined);
      await store.sessions.create({ tokenHash: h, userId: u.id, createdAt: 1000, expiresAt: 5000, method: 'password' });
      await store.sessions.deleteForUser(u.id);
      assert.equal(await store.sessions.live(h, 1), undefined);
    });

    it('remembers how a session was made (column sessions.method)', async () => {
      const u = await newUser();
      const byPassword = uniq('s');
      const byPasskey = uniq('s');
      await store.sessions.create({ tokenHash: byPassword, userId: u.id, createdAt: 1000, expiresAt: 5000, method: 'password' });
      await store.sessions.create({ tokenHash: byPasskey, userId: u.id, createdAt: 1000, expiresAt: 5000, method: 'passkey' });
      assert.deepEqual(await store.sessions.live(byPassword, 2000), { tokenHash: byPassword, userId: u.id, createdAt: 1000, expiresAt: 5000, method: 'password' });
      assert.deepEqual(await store.sessions.live(byPasskey, 2000), { tokenHash: byPasskey, userId: u.id, createdAt: 1000, expiresAt: 5000, method: 'passkey' });
    });

    it('stores passkeys, refuses a duplicate credential, advances the counter by compare-and-set', async () => {
      const u = await newUser();
      const pk = { id: uniq('dev_'), userId: u.id, credentialId: uniq('cred'), publicKey: 'pk', counter: 0, transports: ['internal'], name: 'Phone', createdAt: 1, lastUsedAt: null };
      assert.equal(await store.passkeys.create(pk), true);
      assert.equal(await store.passkeys.create({ ...pk, id: uniq('dev_') }), false);
      assert.deepEqual(await store.passkeys.byCredentialId(pk.credentialId), pk);
      const racers = await Promise.all(Array.from({ length: 20 }, () => store.passkeys.advanceCounter(pk.id, 0, 1, 2)));
      assert.equal(racers.filter(Boolean).length, 1);
      assert.equal((await store.passkeys.listForUser(u.id))[0]?.counter, 1);
      assert.equal(await store.passkeys.delete('u_other', pk.id), false);
      assert.equal(await store.passkeys.delete(u.id, pk.id), true);
      assert.deepEqual(await store.passkeys.listForUser(u.id), []);
    });

    it('removes the passkeys of one owner created at or after a time, no one else\'s', async () => {
      const u = await newUser();
      const other = await newUser();
      const make = async (userId: string, createdAt: number) => {
        const pk = { id: uniq('dev_'), userId, credentialId: uniq('cred'), publicKey: 'pk', counter: 0, transports: [], name: 'Key', createdAt, lastUsedAt: null };
        await store.passkeys.create(pk);
        return pk.id;
      };
      const before = await make(u.id, 100);
      const at = await make(u.id, 200);
      const after = await make(u.id, 300);
      const othersAfter = await make(other.id, 300);
      assert.deepEqual(await store.passkeys.deleteCreatedSince(u.id, 200), [at, after].sort());
      assert.deepEqual((await store.passkeys.listForUser(u.id)).map((p) => p.id), [before]);
      assert.deepEqual((await store.passkeys.listForUser(other.id)).map((p) => p.id), [othersAfter]);
      assert.deepEqual(await store.passkeys.deleteCreatedSince(u.id, 200), []);
    });

    it('consumes a challenge once, only for its purpose, only before expiry', async () => {
      const c = uniq('ch');
      await store.challenges.create({ challenge: c, purpose: 'login', userId: null, sessionHash: null, subject: 'a@b.c', expiresAt: 10_000 });
      assert.equal(await store.challenges.consume(c, 'register', 1), undefined);
      assert.equal(await store.challenges.consume(c, 'login', 10_000), undefined);
      const results = await Promise.all(Array.from({ length: 50 }, () => store.challenges.consume(c, 'login', 5)));
      const winners = results.filter((r) => r !== undefined);
      assert.equal(winners.length, 1);
      assert.equal(winners[0]?.subject, 'a@b.c');
    });

    it('single-use: of 50 concurrent consumers exactly one wins; an expired entry can be taken again', async () => {
      const key = uniq('jti');
      const results = await Promise.all(Array.from({ length: 50 }, () => store.singleUse.consume('dpop', key, 1000, 0)));
      assert.equal(results.filter(Boolean).length, 1);
      assert.equal(await store.singleUse.consume('dpop', key, 2000, 999), false);
      assert.equal(await store.singleUse.consume('other', key, 2000, 999), true);
      assert.equal(await store.singleUse.consume('dpop', key, 3000, 1000), true);
      const again = await Promise.all(Array.from({ length: 20 }, () => store.singleUse.consume('dpop', key, 9000, 3000)));
      assert.equal(again.filter(Boolean).length, 1);
      assert.ok((await store.singleUse.purgeExpired(1_000_000)) >= 1);
    });

    it('single-use: a key given back can be consumed again, once; other keys stay spent', async () => {
      const [key, other] = [uniq('jti'), uniq('jti')];
      assert.deepEqual(await store.singleUse.consumeMany([{ namespace: 'dpop', key, expiresAt: 5000 }, { namespace: 'dpop', key: other, expiresAt: 5000 }], 0), [true, true]);
      await store.singleUse.release('dpop', key);
      await store.singleUse.release('stepup', other); // another namespace: not this entry
      const results = await Promise.all(Array.from({ length: 10 }, () => store.singleUse.consume('dpop', key, 5000, 0)));
      assert.equal(results.filter(Boolean).length, 1);
      assert.equal(await store.singleUse.consume('dpop', other, 5000, 0), false);
      await store.singleUse.release('dpop', uniq('jti')); // a key never consumed: nothing to give back, no error
    });

    it('single-use in one statement: each key decided on its own, a key listed twice first at most once', async () => {
      const [a, b, c] = [uniq('jti'), uniq('jti'), uniq('jti')];
      assert.equal(await store.singleUse.consume('dpop', b, 5000, 0), true);
      const firsts = await store.singleUse.consumeMany([
        { namespace: 'dpop', key: a, expiresAt: 5000 },
        { namespace: 'dpop', key: b, expiresAt: 5000 },
        { namespace: 'dpop', key: a, expiresAt: 5000 },
        { namespace: 'stepup', key: a, expiresAt: 5000 },
        { namespace: 'dpop', key: c, expiresAt: 5000 },
      ], 0);
      assert.deepEqual(firsts, [true, false, false, true, true]);
      assert.deepEqual(await store.singleUse.consumeMany([], 0), []);
      // Concurrent statements over the same keys (in different orders): each key has exactly one winner.
      const keys = Array.from({ length: 20 }, () => uniq('jti'));
      const calls = await Promise.all(Array.from({ length: 10 }, (_, k) =>
        store.singleUse.consumeMany((k % 2 ? [...keys].reverse() : keys).map((key) => ({ namespace: 'dpop', key, expiresAt: 5000 })), 0)));
      for (let i = 0; i < keys.length; i++) assert.equal(calls.filter((r, k) => r[k % 2 ? keys.length - 1 - i : i]).length, 1);
    });

    it("reads an agent with one of its grants in one query (cloud verify's revocation read)", async () => {
      const u = await newUser();
      const agent = agentOf(u);
      const other = { ...agent, id: uniq('ag_') };
      await store.agents.create(agent);
      await store.agents.create(other);
      const grant = grantOf(agent);
      await store.grants.create(grant);
      const standing = (a: AgentRecord) => ({ id: a.id, name: a.name, status: a.status, flag: a.flag, unblockedRevSeq: a.unblockedRevSeq });
      assert.deepEqual(await store.agents.withGrant(agent.id, grant.id), { agent: standing(agent), grant: { id: grant.id, agentId: agent.id, site: 'shop.example', resource: null, status: 'active' } });
      assert.deepEqual(await store.agents.withGrant(other.id, grant.id), { agent: standing(other), grant: undefined }, "another agent's grant is not read");
      assert.deepEqual(await store.agents.withGrant(agent.id, 'gr_missing'), { agent: standing(agent), grant: undefined });
      assert.equal(await store.agents.withGrant('ag_missing', grant.id), undefined);
      await store.grants.revoke(grant.id, 7, 3);
      assert.equal((await store.agents.withGrant(agent.id, grant.id))?.grant?.status, 'revoked');
      // Many pairs in one query, answered in the order asked (concurrent verifies share it).
      const many = await store.agents.withGrants([
        { agentId: other.id, grantId: grant.id },
        { agentId: 'ag_missing', grantId: grant.id },
        { agentId: agent.id, grantId: grant.id },
        { agentId: agent.id, grantId: 'gr_missing' },
      ]);
      assert.deepEqual(many, [{ agent: standing(other), grant: undefined }, undefined, { agent: standing(agent), grant: { id: grant.id, agentId: agent.id, site: 'shop.example', resource: null, status: 'revoked' } }, { agent: standing(agent), grant: undefined }]);
      const concurrent = await Promise.all([store.agents.withGrant(agent.id, grant.id), store.agents.withGrant(other.id, grant.id), store.agents.withGrant('ag_missing', 'gr_missing')]);
      assert.deepEqual(concurrent.map((r) => r && [r.agent.id, r.grant?.id]), [[agent.id, grant.id], [other.id, undefined], undefined]);
    });

    it("verify lookup: the agent with its grant, and the proof's jti consumed once across concurrent calls", async () => {
      const u = await newUser();
      const agent = agentOf(u);
      await store.agents.create(agent);
      const grant = grantOf(agent);
      await store.grants.create(grant);
      const lookup = (key: string, agentId = agent.id, grantId = grant.id, now = 1000) => store.verifyLookup({ agentId, grantId, jti: { namespace: 'dpop', key, expiresAt: 5000 }, now });
      const standing = { agent: { id: agent.id, name: 'Bot', status: 'active', flag: 'ok', unblockedRevSeq: null }, grant: { id: grant.id, agentId: agent.id, site: 'shop.example', resource: null, status: 'active' } };
      const jti = uniq('jti');
      assert.deepEqual(await lookup(jti), { standing, fresh: true });
      assert.deepEqual(await lookup(jti), { standing, fresh: false });
      // Unknown agent or grant: no standing, and the jti is consumed all the same (the caller refuses).
      const other = uniq('jti');
      assert.deepEqual(await lookup(other, 'ag_missing'), { standing: undefined, fresh: true });
      assert.deepEqual(await lookup(other), { standing, fresh: false });
      assert.deepEqual(await lookup(uniq('jti'), agent.id, 'gr_missing'), { standing: { agent: standing.agent, grant: undefined }, fresh: true });
      // Expired entries are taken over.
      assert.equal((await lookup(jti, agent.id, grant.id, 6000)).fresh, true);
      // 30 concurrent lookups of one jti (batched together or not): exactly one is fresh; each reads the standing.
      const raced = uniq('jti');
      const all = await Promise.all(Array.from({ length: 30 }, () => lookup(raced)));
      assert.equal(all.filter((r) => r.fresh).length, 1);
      assert.ok(all.every((r) => r.standing?.grant?.status === 'active'));
      // Lookups of several agents interleaved in one batch: each gets its own standing.
      const second = agentOf(u);
      await store.agents.create({ ...second, name: 'Second' });
      const secondGrant = grantOf(second);
      await store.grants.create(secondGrant);
      const mixed = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 3 === 0 ? lookup(uniq('jti')) : i % 3 === 1 ? lookup(uniq('jti'), second.id, secondGrant.id) : lookup(uniq('jti'), second.id, grant.id))));
      mixed.forEach((r, i) => {
        assert.equal(r.fresh, true);
        if (i % 3 === 0) assert.deepEqual(r.standing, standing);
        else assert.deepEqual([r.standing?.agent.name, r.standing?.grant?.id], ['Second', i % 3 === 1 ? secondGrant.id : undefined], `lookup ${i}`);
      });
      // A committed revocation is read by the next lookup.
      await store.grants.revoke(grant.id, 7, 3);
      assert.equal((await lookup(uniq('jti'))).standing?.grant?.status, 'revoked');
    });

    it('purges every expired single-use key and rate counter, however many (in chunks on SQLite), and nothing live', async () => {
      const old = Array.from({ length: 4500 }, () => uniq('old'));
      assert.equal((await store.singleUse.consumeMany(old.map((key) => ({ namespace: 'dpop', key, expiresAt: 2_000_000 })), 0)).filter(Boolean).length, 4500);
      const live = uniq('live');
      assert.equal(await store.singleUse.consume('dpop', live, 9_000_000, 0), true);
      assert.ok((await store.singleUse.purgeExpired(3_000_000)) >= 4500);
      assert.equal(await store.singleUse.purgeExpired(3_000_000), 0, 'nothing expired is left');
      assert.equal(await store.singleUse.consume('dpop', live, 9_000_000, 3_000_000), false, 'the live key is kept');
      const counters = Array.from({ length: 2500 }, () => uniq('rl-old'));
      for (let i = 0; i < counters.length; i += 500) await Promise.all(counters.slice(i, i + 500).map((k) => store.rateCounters.hit(k, 60_000, 1_000)));
      assert.ok((await store.rateCounters.purgeExpired(3_000_000)) >= 2500);
      assert.equal(await store.rateCounters.purgeExpired(3_000_000), 0);
    });

    it('rate counters count every concurrent hit within a window', async () => {
      const key = uniq('rl');
      const hits = await Promise.all(Array.from({ length: 30 }, () => store.rateCounters.hit(key, 60_000, 120_500)));
      assert.deepEqual(hits.map((h) => h.count).sort((a, b) => a - b), Array.from({ length: 30 }, (_, i) => i + 1));
      assert.equal(hits[0]?.resetAt, 180_000);
      assert.equal((await store.rateCounters.hit(key, 60_000, 180_000)).count, 1);
    });

    it('counters hand out distinct increasing values under concurrency', async () => {
      const name = uniq('seq');
      assert.equal(await store.counters.current(name), 0);
      const values = await Promise.all(Array.from({ length: 25 }, () => store.counters.next(name)));
      assert.deepEqual([...values].sort((a, b) => a - b), Array.from({ length: 25 }, (_, i) => i + 1));
      assert.equal(await store.counters.current(name), 25);
    });

    it('stores agents and lists the revoked ones', async () => {
      const u = await newUser();
      const agent = agentOf(u);
      await store.agents.create(agent);
      assert.deepEqual(await store.agents.byId(agent.id), agent);
      assert.equal((await store.agents.listRevoked(9)).some((a) => a.id === agent.id), false);
      await store.agents.update(agent.id, { status: 'removed', removedAt: 9, flagRevSeq: 3 });
      assert.deepEqual(await store.agents.listForUser(u.id), []);
      assert.equal((await store.agents.listForUser(u.id, true)).length, 1);
      assert.equal((await store.agents.listRevoked(9)).find((a) => a.id === agent.id)?.flagRevSeq, 3);
      // A tombstone and a lifted block stay listed for 600 s + 120 s (decisions §25), then leave.
      assert.equal((await store.agents.listRevoked(720_008)).some((a) => a.id === agent.id), true);
      assert.equal((await store.agents.listRevoked(720_009)).some((a) => a.id === agent.id), false);
      const unblocked: AgentRecord = { ...agent, id: uniq('ag_'), flag: 'ok', unblockedAt: 10_000, unblockedRevSeq: 7 };
      await store.agents.create(unblocked);
      assert.equal((await store.agents.listRevoked(729_999)).find((a) => a.id === unblocked.id)?.unblockedRevSeq, 7);
      assert.equal((await store.agents.listRevoked(730_000)).some((a) => a.id === unblocked.id), false);
    });

    it('lists a flagged agent with its owner and when its flag was set, read page by page (issue 22)', async () => {
      const u = await newUser();
      const agent = agentOf(u);
      await store.agents.create(agent);
      const flagged = async (now: number) => {
        const rows: RevokedAgentRow[] = [];
        let after: RevokedAgentRow | undefined;
        for (;;) {
          const page = await store.agents.listRevoked(now, { reason: 'flagged', after, limit: 1 });
          rows.push(...page);
          if (page.length < 1) return rows.filter((r) => r.id === agent.id);
          after = page[page.length - 1];
        }
      };
      await store.agents.update(agent.id, { flag: 'revoked', flagRevSeq: 11, flaggedAt: 4_000 });
      // Long after the window the block is still listed (the bound drops it, not the store).
      assert.deepEqual(await flagged(10_000_000), [{ id: agent.id, userId: u.id, status: 'active', flag: 'revoked', flagRevSeq: 11, flaggedAt: 4_000, removedAt: null, unblockedAt: null, unblockedRevSeq: null, blockedRevSeq: null, suspendedRevSeq: null }]);
      assert.equal((await store.agents.listRevoked(10_000_000)).find((a) => a.id === agent.id)?.flaggedAt, 4_000);
      // Not part of AgentRecord: byId is unchanged.
      assert.deepEqual(await store.agents.byId(agent.id), { ...agent, flag: 'revoked', flagRevSeq: 11 });
      await store.agents.update(agent.id, { flag: 'ok', flagRevSeq: null, flaggedAt: null });
      assert.deepEqual(await flagged(10_000_000), []);
      // An agent stored flagged without a time (written by an older release) reads null: never dropped.
      const old: AgentRecord = { ...agentOf(u), flag: 'revoked', flagRevSeq: 12 };
      await store.agents.create(old);
      assert.equal((await store.agents.listRevoked(10_000_000)).find((a) => a.id === old.id)?.flaggedAt, null);
    });

    it('keeps signing keys and retires all but one', async () => {
      const a = uniq('k'), b = uniq('k');
      await store.signingKeys.create({ kid: a, publicJwk: { kty: 'EC' }, privateJwk: '{}', encrypted: false, createdAt: 1, retiredAt: null });
      await store.signingKeys.create({ kid: b, publicJwk: { kty: 'EC' }, privateJwk: '{}', encrypted: false, createdAt: 2, retiredAt: null });
      await store.signingKeys.retireAllExcept(b, 7);
      const keys = await store.signingKeys.list();
      assert.equal(keys.find((k) => k.kid === a)?.retiredAt, 7);
      assert.equal(keys.find((k) => k.kid === b)?.retiredAt, null);
      await store.signingKeys.replacePrivate(a, 'cipher', true);
      assert.equal((await store.signingKeys.list()).find((k) => k.kid === a)?.encrypted, true);
    });

    const request = (over: Partial<AuthzRequestRecord> = {}): AuthzRequestRecord => ({
      id: uniq('t_'), kind: 'initial', agentId: uniq('ag_'), userId: 'u_1', site: 'shop.example', scopes: ['list'], userInfo: [],
      action: null, status: 'pending', createdAt: 1000, expiresAt: 301_000, decidedAt: null, grantId: null, oidc: null, ...over,
    });
    const grant = (over: Partial<GrantRecord> = {}): GrantRecord => ({
      id: uniq('gr_'), userId: 'u_1', agentId: uniq('ag_'), site: 'shop.example', scopes: ['list'], userInfo: ['user:email'], status: 'active',
      createdAt: 1000, expiresAt: null, usesLeft: null, refreshHash: null, passesIssued: 0, revokedAt: null, revSeq: null, supersededAt: null, resource: null, ...over,
    });

    it('keeps the sign-in context of a request filed by the OIDC provider', async () => {
      const oidc = { clientId: 'c_1', clientName: 'Shop', verified: false, flow: 'ciba' as const, bindingMessage: 'Order #42 <b>"total"</b> — 12 €' };
      const r = request({ oidc });
      assert.equal(await store.authzRequests.create(r), true);
      assert.deepEqual(await store.authzRequests.byId(r.id), r);
      const plain = request();
      await store.authzRequests.create(plain);
      assert.equal((await store.authzRequests.byId(plain.id))?.oidc, null);
    });

    it('keeps one pending access request per agent and site, even under a race', async () => {
      const agentId = uniq('ag_');
      const results = await Promise.all(Array.from({ length: 20 }, () => store.authzRequests.create(request({ agentId }))));
      assert.equal(results.filter(Boolean).length, 1);
      assert.equal(await store.authzRequests.create(request({ agentId, kind: 'stepup', action: 'pay' })), true, 'step-ups are not limited');
      assert.equal(await store.authzRequests.create(request({ agentId, site: 'other.example' })), true);
      assert.equal((await store.authzRequests.expireStale(301_000, { agentId, site: 'shop.example' })).length, 2);
      assert.equal(await store.authzRequests.create(request({ agentId })), true, 'a new request once the old one expired');
    });

    it('moves a request on by compare-and-set: of 50 deciders exactly one wins, never after expiry', async () => {
      const r = request({ userId: uniq('u_') });
      await store.authzRequests.create(r);
      const results = await Promise.all(Array.from({ length: 50 }, (_, i) => store.authzRequests.transition(r.id, ['pending'], i % 2 ? 'approved' : 'denied', 2000, { grantId: 'gr_x' })));
      const winners = results.filter((x) => x !== undefined);
      assert.equal(winners.length, 1);
      assert.equal((await store.authzRequests.byId(r.id))?.status, winners[0]?.status);
      const late = request();
      await store.authzRequests.create(late);
      assert.equal(await store.authzRequests.transition(late.id, ['pending'], 'approved', 301_000), undefined);
      assert.deepEqual((await store.authzRequests.listPendingForUser(r.userId, 2000)).map((x) => x.id), []);
      const open = request({ userId: r.userId });
      await store.authzRequests.create(open);
      assert.deepEqual((await store.authzRequests.listPendingForUser(r.userId, 2000)).map((x) => x.id), [open.id]);
      assert.equal(await store.authzRequests.cancelPendingForAgent(open.agentId, 3000), 1);
      assert.equal((await store.authzRequests.byId(open.id))?.status, 'denied');
    });

    it('issues passes atomically: one winner per refresh token, uses never go below zero', async () => {
      const g = grant({ refreshHash: 'r0', usesLeft: 5 });
      await store.grants.create(g);
      const rotations = await Promise.all(Array.from({ length: 50 }, (_, i) => store.grants.issuePass(g.id, { now: 2000, newRefreshHash: `r1-${i}`, expectedRefreshHash: 'r0' })));
      assert.equal(rotations.filter(Boolean).length, 1);
      const after = await store.grants.byId(g.id);
      assert.equal(after?.usesLeft, 4);
      assert.equal(after?.passesIssued, 1);
      const spends = await Promise.all(Array.from({ length: 20 }, (_, i) => store.grants.issuePass(g.id, { now: 2000, newRefreshHash: `x${i}` })));
      assert.equal(spends.filter(Boolean).length, 4);
      assert.equal((await store.grants.byId(g.id))?.usesLeft, 0);
      const expiring = grant({ expiresAt: 5000 });
      await store.grants.create(expiring);
      assert.ok(await store.grants.issuePass(expiring.id, { now: 4999, newRefreshHash: 'a' }));
      assert.equal(await store.grants.issuePass(expiring.id, { now: 5000, newRefreshHash: 'b' }), undefined);
    });

    it('revokes, supersedes and lists revoked grants', async () => {
      const g = grant();
      await store.grants.create(g);
      assert.equal((await store.grants.activeFor(g.agentId, g.site))?.id, g.id);
      assert.equal(await store.grants.revoke(g.id, 3000, 42), true);
      assert.equal(await store.grants.revoke(g.id, 3000, 43), false);
      assert.equal(await store.grants.activeFor(g.agentId, g.site), undefined);
      assert.equal((await store.grants.listRevoked(3000)).find((x) => x.id === g.id)?.revSeq, 42);
      assert.equal(await store.grants.supersede(g.agentId, g.site, 5000), 1);
      // Superseded after its revocation or not: listed for 600 s + 120 s after the revocation (decisions §25).
      assert.equal((await store.grants.listRevoked(722_999)).find((x) => x.id === g.id)?.revokedAt, 3000);
      assert.equal((await store.grants.listRevoked(723_000)).some((x) => x.id === g.id), false);
      const replaced = grant();
      await store.grants.create(replaced);
      assert.equal(await store.grants.supersede(replaced.agentId, replaced.site, 5000), 1);
      assert.equal((await store.grants.listRevoked(5000)).some((x) => x.id === replaced.id), false, 'an active grant superseded is not a revocation');
      const h = grant({ agentId: g.agentId, site: 'b.example' });
      await store.grants.create(h);
      assert.equal(await store.grants.setUserInfo(h.id, [], ['user:name']), false, 'stale expectation');
      assert.equal(await store.grants.setUserInfo(h.id, [], ['user:email']), true);
      assert.deepEqual((await store.grants.byId(h.id))?.userInfo, []);
      assert.equal(await store.grants.revokeAllForAgent(g.agentId, 4000, 44), 1);
      assert.equal((await store.grants.listForAgent(g.agentId)).length, 2);
    });

    it('keeps one report per agent and site (the latest) and agent statuses', async () => {
      const agentId = uniq('ag_');
      await store.reports.upsert({ agentId, site: 'a.example', kind: 'spam', detail: '', createdAt: 1 });
      await store.reports.upsert({ agentId, site: 'a.example', kind: 'good', detail: 'ok now', createdAt: 2 });
      await store.reports.upsert({ agentId, site: 'b.example', kind: 'fraud', detail: '', createdAt: 3 });
      assert.deepEqual((await store.reports.listForAgent(agentId)).map((r) => `${r.site}:${r.kind}`), ['a.example:good', 'b.example:fraud']);
      // `keep`: a previous report of one of those kinds stays, in the same statement.
      assert.equal(await store.reports.upsert({ agentId, site: 'b.example', kind: 'good', detail: '', createdAt: 4 }, ['fraud', 'spam']), false);
      assert.equal(await store.reports.upsert({ agentId, site: 'a.example', kind: 'good', detail: 'again', createdAt: 5 }, ['fraud', 'spam']), true);
      assert.equal(await store.reports.upsert({ agentId, site: 'c.example', kind: 'good', detail: '', createdAt: 6 }, ['fraud']), true);
      assert.deepEqual((await store.reports.listForAgent(agentId)).map((r) => `${r.site}:${r.kind}:${r.createdAt}`), ['a.example:good:5', 'b.example:fraud:3', 'c.example:good:6']);
      await store.agentStatuses.upsert({ agentId, site: '', status: 'working', createdAt: 1 });
      await store.agentStatuses.upsert({ agentId, site: '', status: 'done', createdAt: 2 });
      assert.deepEqual((await store.agentStatuses.listForAgent(agentId)).map((s) => s.status), ['done']);
    });

    it('pages the activity trail newest first with filters', async () => {
      const userId = uniq('u_');
      const seqs: number[] = [];
      for (let i = 0; i < 7; i++) {
        seqs.push(await store.activity.add({ userId, agentId: i % 2 ? 'ag_a' : 'ag_b', site: 's', action: i < 3 ? 'approve' : 'pass', detail: { i }, ip: null, createdAt: i }));
      }
      const first = await store.activity.list(userId, { before: 0, limit: 3 });
      assert.deepEqual(first.map((a) => a.detail.i), [6, 5, 4]);
      const next = await store.activity.list(userId, { before: first[2]!.seq, limit: 3 });
      assert.deepEqual(next.map((a) => a.detail.i), [3, 2, 1]);
      assert.deepEqual((await store.activity.list(userId, { before: 0, limit: 50, agentId: 'ag_a', action: 'pass' })).map((a) => a.detail.i), [5, 3]);
      assert.deepEqual(await store.activity.list('u_nobody', { before: 0, limit: 50 }), []);
    });

    it("numbers each owner's activity 1, 2, 3... with no gap after a rollback or under concurrency", async () => {
      const userId = uniq('u_');
      const other = uniq('u_');
      const record = (who: string, i: number) => ({ userId: who, agentId: null, site: null, action: 'a', detail: { i }, ip: null, createdAt: i });
      assert.equal(await store.activity.add(record(userId, 0)), 1);
      assert.equal(await store.activity.add(record(other, 0)), 1, 'another owner counts on its own');
      await assert.rejects(store.transaction(async (tx) => {
        await tx.activity.add(record(userId, 1));
        throw new Error('rolled back');
      }), /rolled back/);
      assert.equal(await store.activity.add(record(userId, 2)), 2, 'the rolled-back number is given again');
      const concurrent = await Promise.all(Array.from({ length: 20 }, (_, i) => store.activity.add(record(userId, 10 + i))));
      assert.deepEqual([...concurrent].sort((a, b) => a - b), Array.from({ length: 20 }, (_, i) => i + 3));
      const seqs = (await store.activity.list(userId, { before: 0, limit: 100 })).map((r) => r.seq);
      assert.deepEqual(seqs, Array.from({ length: 22 }, (_, i) => 22 - i));
    });

    it('leases: taken when free, renewed by the holder, refused to others until expired, released', async () => {
      const name = uniq('lease');
      assert.equal(await store.leases.get(name), undefined);
      assert.equal(await store.leases.acquire(name, 'node-a', 1000, 500), true);
      assert.deepEqual(await store.leases.get(name), { name, holder: 'node-a', expiresAt: 1500 });
      assert.equal(await store.leases.acquire(name, 'node-b', 1499, 500), false, 'held by a until 1500');
      assert.equal(await store.leases.acquire(name, 'node-a', 1400, 500), true, 'the holder renews');
      assert.equal((await store.leases.get(name))?.expiresAt, 1900);
      assert.equal(await store.leases.acquire(name, 'node-b', 1899, 500), false);
      assert.equal(await store.leases.acquire(name, 'node-b', 1900, 500), true, 'expired: b takes over');
      assert.equal(await store.leases.acquire(name, 'node-a', 2000, 500), false, 'a lost it');
      assert.equal(await store.leases.release(name, 'node-a'), false, 'only the holder releases');
      assert.equal(await store.leases.release(name, 'node-b'), true);
      assert.equal(await store.leases.get(name), undefined);
      assert.equal(await store.leases.acquire(name, 'node-a', 2000, 500), true, 'free again after release');
    });

    it('leases: of 30 nodes racing for a free lease, and again for an expired one, exactly one wins', async () => {
      const name = uniq('lease');
      const race = (now: number) => Promise.all(Array.from({ length: 30 }, (_, i) => store.leases.acquire(name, `node-${i}`, now, 1000)));
      const first = await race(5000);
      assert.equal(first.filter(Boolean).length, 1);
      assert.equal((await store.leases.get(name))?.holder, `node-${first.indexOf(true)}`);
      const second = await race(6000);
      assert.equal(second.filter(Boolean).length, 1);
      assert.equal((await store.leases.get(name))?.holder, `node-${second.indexOf(true)}`);
    });

    it('rolls a failed transaction back', async () => {
      const email = `${uniq('tx')}@example.com`;
      await assert.rejects(
        store.transaction(async (tx) => {
          await tx.users.create({ id: uniq('u_'), email, displayName: 'T', passwordHash: 'h', phone: null, phoneVerified: false, createdAt: 1 });
          throw new Error('boom');
        }),
        /boom/,
      );
      assert.equal(await store.users.byEmail(email), undefined);
    });
  });
}
