import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { OidcCibaRecord, OidcSignInRecord } from '../../src/store/ports/index.ts';
import { type OpenStore, useStore } from './use-store.ts';

let n = 0;
const LIMIT = { max: 1000, windowMs: 60_000 };
const uniq = (p: string): string => `${p}${Date.now().toString(36)}${(n++).toString(36)}`;

/** The storage contract of OIDC sign-ins, pairwise subjects and CIBA requests (migrations 009, 010, 016), on every backend. */
export function oidcSignInsContract(name: string, open: OpenStore): void {
  describe(`store contract (oidc sign-ins): ${name}`, () => {
    const store = useStore(open);

    const signIn = (over: Partial<OidcSignInRecord> = {}): OidcSignInRecord => ({
      sid: uniq('sid'),
      clientId: uniq('c_'),
      userId: uniq('u_'),
      agentId: uniq('ag_'),
      grantId: uniq('gr_'),
      site: 'shop.example:8443',
      scopes: ['openid', 'profile'],
      amr: ['agent', 'passkey'],
      authTime: 1_800_000_000,
      refreshHash: 'a'.repeat(64),
      createdAt: 2_000_000_000_000,
      expiresAt: 2_000_000_000_000 + 30 * 86_400_000,
      endedAt: null,
      dpopJkt: null,
      resource: null,
      ...over,
    });

    it('stores every field and reads it back the same; a sid is created once', async () => {
      const s = signIn();
      assert.equal(await store.oidcSignIns.create(s), true);
      assert.deepEqual(await store.oidcSignIns.bySid(s.sid), s);
      assert.equal(await store.oidcSignIns.create({ ...s, clientId: 'c_other' }), false);
      assert.deepEqual(await store.oidcSignIns.bySid(s.sid), s);
      assert.equal(await store.oidcSignIns.bySid('nobody'), undefined);
      const browser = signIn({ resource: 'https://mcp.example/mcp?tenant=a' });
      assert.equal(await store.oidcSignIns.create(browser), true);
      assert.deepEqual(await store.oidcSignIns.bySid(browser.sid), browser, "a browser sign-in's resource is kept exactly");
    });

    it('rotates only from the current hash, and of concurrent rotations exactly one wins', async () => {
      const s = signIn();
      await store.oidcSignIns.create(s);
      const now = s.createdAt + 1000;
      assert.equal(await store.oidcSignIns.rotate(s.sid, 'b'.repeat(64), 'c'.repeat(64), now, LIMIT), undefined);
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => store.oidcSignIns.rotate(s.sid, s.refreshHash, `${i}`.repeat(64), now, LIMIT)));
      const winners = results.filter((r) => r !== undefined);
      assert.equal(winners.length, 1);
      assert.equal((await store.oidcSignIns.bySid(s.sid))?.refreshHash, winners[0]?.refreshHash);
      assert.equal(await store.oidcSignIns.rotate(s.sid, s.refreshHash, 'd'.repeat(64), now, LIMIT), undefined);
    });

    it('rotations of many sign-ins at once (one group commit): each answered with its own sign-in, racing twins of one losing, the limit exact', async () => {
      const many = Array.from({ length: 40 }, () => signIn());
      for (const s of many) await store.oidcSignIns.create(s);
      const now = many[0]!.createdAt + 1000;
      const limitOne = { max: 1, windowMs: 60_000 };
      // Every sign-in twice in the same turn: the second of each pair finds the hash rotated already.
      const calls = many.flatMap((s, i) => [0, 1].map((k) => store.oidcSignIns.rotate(s.sid, s.refreshHash, `${i}-${k}`.padEnd(64, 'x'), now, limitOne)));
      const results = await Promise.all(calls);
      many.forEach((s, i) => {
        const [first, second] = [results[2 * i], results[2 * i + 1]];
        assert.equal(first?.sid, s.sid, `sign-in ${i}: its own record`);
        assert.equal(first?.refreshHash, `${i}-0`.padEnd(64, 'x'));
        assert.equal(second, undefined, `sign-in ${i}: the racing twin loses`);
      });
      // Over the limit of one refresh per window: the next rotation from the new hash is refused.
      const over = await Promise.all(many.map((s, i) => store.oidcSignIns.rotate(s.sid, `${i}-0`.padEnd(64, 'x'), 'z'.repeat(64), now + 1, limitOne)));
      assert.deepEqual(over, many.map(() => undefined));
      assert.equal((await store.oidcSignIns.bySid(many[7]!.sid))?.refreshHash, '7-0'.padEnd(64, 'x'), 'a refused rotation leaves the token good');
    });

    it('counts refreshes in the rotation itself: past the limit in a window, no rotation, and the token stays good', async () => {
      const s = signIn();
      await store.oidcSignIns.create(s);
      const limit = { max: 3, windowMs: 60_000 };
      let hash = s.refreshHash;
      const t0 = s.createdAt + 1_000;
      for (let i = 0; i < 3; i++) {
        const next = `${i}`.repeat(64);
        assert.ok(await store.oidcSignIns.rotate(s.sid, hash, next, t0 + i, limit), `rotation ${i + 1}`);
        hash = next;
      }
      assert.equal(await store.oidcSignIns.refreshLimitedUntil(s.sid, t0 + 10, limit), t0 + 60_000);
      assert.equal(await store.oidcSignIns.rotate(s.sid, hash, 'x'.repeat(64), t0 + 10, limit), undefined);
      assert.equal((await store.oidcSignIns.bySid(s.sid))?.refreshHash, hash, 'the refused rotation changed nothing');
      assert.equal(await store.oidcSignIns.refreshLimitedUntil(s.sid, t0 + 60_000, limit), undefined, 'a new window');
      assert.ok(await store.oidcSignIns.rotate(s.sid, hash, 'y'.repeat(64), t0 + 60_000, limit));
      assert.equal(await store.oidcSignIns.refreshLimitedUntil('nobody', t0, limit), undefined);
    });

    it('does not rotate an ended or expired sign-in; ending is once', async () => {
      const s = signIn();
      await store.oidcSignIns.create(s);
      assert.deepEqual(await store.oidcSignIns.end(s.sid, s.createdAt + 5), { ...s, endedAt: s.createdAt + 5 });
      assert.equal(await store.oidcSignIns.end(s.sid, s.createdAt + 6), undefined);
      assert.equal((await store.oidcSignIns.bySid(s.sid))?.endedAt, s.createdAt + 5);
      assert.equal(await store.oidcSignIns.rotate(s.sid, s.refreshHash, 'e'.repeat(64), s.createdAt + 10, LIMIT), undefined);
      assert.equal(await store.oidcSignIns.end('nobody', 1), undefined);
      const old = signIn();
      await store.oidcSignIns.create(old);
      assert.equal(await store.oidcSignIns.rotate(old.sid, old.refreshHash, 'f'.repeat(64), old.expiresAt, LIMIT), undefined);
      assert.ok(await store.oidcSignIns.rotate(old.sid, old.refreshHash, 'f'.repeat(64), old.expiresAt - 1, LIMIT));
    });

    it('ends every live sign-in of an agent at a site, or anywhere, in one statement, each once', async () => {
      const agentId = uniq('ag_');
      const site = 'shop.example:8443';
      const a = signIn({ agentId, site });
      const b = signIn({ agentId, site, grantId: uniq('gr_') });
      const elsewhere = signIn({ agentId, site: 'other.example' });
      const otherAgent = signIn({ site });
      const ended = signIn({ agentId, site, endedAt: 5 });
      const expired = signIn({ agentId, site, expiresAt: 100 });
      for (const s of [a, b, elsewhere, otherAgent, ended, expired]) await store.oidcSignIns.create(s);
      const now = a.createdAt + 10;
      const atSite = await store.oidcSignIns.endLive({ agentId, site }, now);
      assert.deepEqual(atSite.map((s) => s.sid).sort(), [a.sid, b.sid].sort());
      assert.ok(atSite.every((s) => s.endedAt === now));
      assert.deepEqual(await store.oidcSignIns.endLive({ agentId, site }, now), []);
      assert.deepEqual((await store.oidcSignIns.endLive({ agentId }, now)).map((s) => s.sid), [elsewhere.sid]);
      assert.equal((await store.oidcSignIns.bySid(otherAgent.sid))?.endedAt, null);
      assert.equal((await store.oidcSignIns.bySid(ended.sid))?.endedAt, 5);
      assert.equal((await store.oidcSignIns.bySid(expired.sid))?.endedAt, null);
    });

    it('lists an owner\'s live sign-ins, newest first, with the DPoP key they are bound to', async () => {
      const userId = uniq('u_');
      const older = signIn({ userId, createdAt: 2_000_000_000_000, dpopJkt: 'j'.repeat(43) });
      const newer = signIn({ userId, createdAt: 2_000_000_001_000 });
      const ended = signIn({ userId, endedAt: 2_000_000_000_500 });
      const expired = signIn({ userId, expiresAt: 2_000_000_000_100 });
      for (const s of [older, newer, ended, expired, signIn()]) await store.oidcSignIns.create(s);
      const live = await store.oidcSignIns.listLiveForUser(userId, 2_000_000_002_000);
      assert.deepEqual(live, [newer, older]);
    });

    it('remembers the pairwise subject a client was given, once, and only that client finds the agent by it', async () => {
      const agentId = uniq('ag_');
      const pairwise = uniq('pw');
      const client = uniq('c_');
      const sameHost = uniq('c_');
      await store.oidcSubjects.remember(client, 'shop.example', pairwise, agentId, 10);
      await store.oidcSubjects.remember(client, 'shop.example', pairwise, 'ag_other', 20);
      assert.deepEqual(await store.oidcSubjects.find(client, pairwise), { site: 'shop.example', agentId });
      // Another client, on the same host (so the same pairwise value) or not, does not find it.
      assert.equal(await store.oidcSubjects.find(sameHost, pairwise), undefined);
      assert.equal(await store.oidcSubjects.find(client, 'unknown'), undefined);
      // Given to the other client too (the agent signed in there), each finds it for itself.
      await store.oidcSubjects.remember(sameHost, 'shop.example', pairwise, agentId, 30);
      assert.deepEqual(await store.oidcSubjects.find(sameHost, pairwise), { site: 'shop.example', agentId });
    });

    it('forgets an agent\'s subjects at one site for every client, or everywhere, and nothing of other agents', async () => {
      const agentId = uniq('ag_');
      const other = uniq('ag_');
      const [a, b] = [uniq('c_'), uniq('c_')];
      const [pwShop, pwMall, pwOther] = [uniq('pw'), uniq('pw'), uniq('pw')];
      await store.oidcSubjects.remember(a, 'shop.example', pwShop, agentId, 10);
      await store.oidcSubjects.remember(b, 'shop.example', pwShop, agentId, 10);
      await store.oidcSubjects.remember(a, 'mall.example', pwMall, agentId, 10);
      await store.oidcSubjects.remember(a, 'shop.example', pwOther, other, 10);
      assert.equal(await store.oidcSubjects.forget({ agentId, site: 'shop.example' }), 2);
      assert.equal(await store.oidcSubjects.find(a, pwShop), undefined);
      assert.equal(await store.oidcSubjects.find(b, pwShop), undefined);
      assert.deepEqual(await store.oidcSubjects.find(a, pwMall), { site: 'mall.example', agentId }, 'another site stays');
      assert.deepEqual(await store.oidcSubjects.find(a, pwOther), { site: 'shop.example', agentId: other }, 'another agent stays');
      assert.equal(await store.oidcSubjects.forget({ agentId }), 1);
      assert.equal(await store.oidcSubjects.find(a, pwMall), undefined);
      assert.equal(await store.oidcSubjects.forget({ agentId }), 0);
      // Remembered again (a new sign-in), it is found again.
      await store.oidcSubjects.remember(a, 'shop.example', pwShop, agentId, 40);
      assert.deepEqual(await store.oidcSubjects.find(a, pwShop), { site: 'shop.example', agentId });
    });

    const ciba = (over: Partial<OidcCibaRecord> = {}): OidcCibaRecord => ({
      idHash: uniq('h'), clientId: uniq('c_'), txnId: uniq('t_'), agentId: uniq('ag_'), userId: uniq('u_'), site: 'shop.example',
      scopes: ['openid'], intervalSec: 5, lastPollAt: null, consumedAt: null, createdAt: 1_000, expiresAt: 301_000, ...over,
    });

    it('CIBA: stores a request and reads it back; polls keep the interval, slow_down adds 5 s each time', async () => {
      const c = ciba();
      await store.oidcCiba.create(c);
      assert.deepEqual(await store.oidcCiba.byIdHash(c.idHash), c);
      const first = await store.oidcCiba.poll(c.idHash, 1_100);
      assert.deepEqual(first, { ok: true, record: { ...c, lastPollAt: 1_100 } }, 'the first poll, however soon, is on time');
      assert.deepEqual(await store.oidcCiba.poll(c.idHash, 2_000), { ok: false, slowDown: true, intervalSec: 10 });
      assert.deepEqual(await store.oidcCiba.poll(c.idHash, 11_999), { ok: false, slowDown: true, intervalSec: 15 }, 'counted from the latest poll');
      const onTime = await store.oidcCiba.poll(c.idHash, 26_999);
      assert.equal(onTime.ok, true);
      assert.deepEqual(await store.oidcCiba.poll('unknown', 1), { ok: false, slowDown: false });
    });

    it('CIBA: of concurrent polls at most one is on time; consumption is once; expired requests are purged', async () => {
      const c = ciba();
      await store.oidcCiba.create(c);
      const polls = await Promise.all(Array.from({ length: 8 }, () => store.oidcCiba.poll(c.idHash, 5_000)));
      assert.equal(polls.filter((p) => p.ok).length, 1);
      const consumed = await Promise.all(Array.from({ length: 6 }, () => store.oidcCiba.consume(c.idHash, 6_000)));
      assert.equal(consumed.filter(Boolean).length, 1);
      assert.equal((await store.oidcCiba.byIdHash(c.idHash))?.consumedAt, 6_000);
      const old = ciba({ expiresAt: 50 });
      await store.oidcCiba.create(old);
      assert.ok((await store.oidcCiba.purgeExpired(100)) >= 1);
      assert.equal(await store.oidcCiba.byIdHash(old.idHash), undefined);
      assert.ok(await store.oidcCiba.byIdHash(c.idHash));
    });

    it('purges sign-ins that ended or expired before a time, and keeps the others', async () => {
      const live = signIn();
      const endedLongAgo = signIn({ endedAt: 1_000 });
      const endedRecently = signIn({ endedAt: 9_000 });
      const expiredLongAgo = signIn({ expiresAt: 2_000 });
      for (const s of [live, endedLongAgo, endedRecently, expiredLongAgo]) await store.oidcSignIns.create(s);
      assert.ok((await store.oidcSignIns.purgeEnded(5_000)) >= 2);
      assert.equal(await store.oidcSignIns.bySid(endedLongAgo.sid), undefined);
      assert.equal(await store.oidcSignIns.bySid(expiredLongAgo.sid), undefined);
      assert.equal((await store.oidcSignIns.bySid(endedRecently.sid))?.endedAt, 9_000);
      assert.equal((await store.oidcSignIns.bySid(live.sid))?.sid, live.sid);
    });
  });
}
