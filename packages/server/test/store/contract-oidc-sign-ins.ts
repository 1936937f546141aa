import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { OidcSignInRecord, Store } from '../../src/store/ports.ts';

let n = 0;
const uniq = (p: string): string => `${p}${Date.now().toString(36)}${(n++).toString(36)}`;

/** The storage contract of OIDC sign-ins (migration 009), on every backend. */
export function oidcSignInsContract(name: string, open: () => Promise<{ store: Store; cleanup: () => Promise<void> }>): void {
  describe(`store contract (oidc sign-ins): ${name}`, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    before(async () => {
      ({ store, cleanup } = await open());
    });
    after(async () => {
      await store.close();
      await cleanup();
    });

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
      ...over,
    });

    it('stores every field and reads it back the same; a sid is created once', async () => {
      const s = signIn();
      assert.equal(await store.oidcSignIns.create(s), true);
      assert.deepEqual(await store.oidcSignIns.bySid(s.sid), s);
      assert.equal(await store.oidcSignIns.create({ ...s, clientId: 'c_other' }), false);
      assert.deepEqual(await store.oidcSignIns.bySid(s.sid), s);
      assert.equal(await store.oidcSignIns.bySid('nobody'), undefined);
    });

    it('rotates only from the current hash, and of concurrent rotations exactly one wins', async () => {
      const s = signIn();
      await store.oidcSignIns.create(s);
      const now = s.createdAt + 1000;
      assert.equal(await store.oidcSignIns.rotate(s.sid, 'b'.repeat(64), 'c'.repeat(64), now), undefined);
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => store.oidcSignIns.rotate(s.sid, s.refreshHash, `${i}`.repeat(64), now)));
      const winners = results.filter((r) => r !== undefined);
      assert.equal(winners.length, 1);
      assert.equal((await store.oidcSignIns.bySid(s.sid))?.refreshHash, winners[0]?.refreshHash);
      assert.equal(await store.oidcSignIns.rotate(s.sid, s.refreshHash, 'd'.repeat(64), now), undefined);
    });

    it('does not rotate an ended or expired sign-in; ending is once', async () => {
      const s = signIn();
      await store.oidcSignIns.create(s);
      assert.equal(await store.oidcSignIns.end(s.sid, s.createdAt + 5), true);
      assert.equal(await store.oidcSignIns.end(s.sid, s.createdAt + 6), false);
      assert.equal((await store.oidcSignIns.bySid(s.sid))?.endedAt, s.createdAt + 5);
      assert.equal(await store.oidcSignIns.rotate(s.sid, s.refreshHash, 'e'.repeat(64), s.createdAt + 10), undefined);
      assert.equal(await store.oidcSignIns.end('nobody', 1), false);
      const old = signIn();
      await store.oidcSignIns.create(old);
      assert.equal(await store.oidcSignIns.rotate(old.sid, old.refreshHash, 'f'.repeat(64), old.expiresAt), undefined);
      assert.ok(await store.oidcSignIns.rotate(old.sid, old.refreshHash, 'f'.repeat(64), old.expiresAt - 1));
    });

    it('ends every live sign-in of a grant or of an agent in one statement, each once', async () => {
      const grantId = uniq('gr_');
      const agentId = uniq('ag_');
      const a = signIn({ grantId, agentId });
      const b = signIn({ grantId });
      const c = signIn({ agentId });
      const ended = signIn({ grantId, endedAt: 5 });
      const expired = signIn({ grantId, expiresAt: 100 });
      for (const s of [a, b, c, ended, expired]) await store.oidcSignIns.create(s);
      const now = a.createdAt + 10;
      const byGrant = await store.oidcSignIns.endLive({ grantId }, now);
      assert.deepEqual(byGrant.map((s) => s.sid).sort(), [a.sid, b.sid].sort());
      assert.ok(byGrant.every((s) => s.endedAt === now));
      assert.deepEqual((await store.oidcSignIns.endLive({ agentId }, now)).map((s) => s.sid), [c.sid]);
      assert.deepEqual(await store.oidcSignIns.endLive({ grantId }, now), []);
      assert.equal((await store.oidcSignIns.bySid(ended.sid))?.endedAt, 5);
      assert.equal((await store.oidcSignIns.bySid(expired.sid))?.endedAt, null);
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
