import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { EmailClaimRecord } from '../../src/store/ports/index.ts';
import { type OpenStore, useStore } from './use-store.ts';

let n = 0;
const uniq = (p: string): string => `${p}${Date.now().toString(36)}${(n++).toString(36)}`;
const DAY = 86_400_000;

/** The storage contract of address take-over (migration 017): claims and releasing an unverified address, on every backend. */
export function takeoverContract(name: string, open: OpenStore): void {
  describe(`store contract (address take-over): ${name}`, () => {
    const store = useStore(open);

    const newUser = async (email = `${uniq('u')}@example.com`) => {
      const user = { id: uniq('u_'), email, displayName: 'Ann', passwordHash: 'h', phone: null, phoneVerified: false, createdAt: 1000 };
      assert.equal(await store.users.create(user), true);
      return user;
    };
    const claim = (over: Partial<EmailClaimRecord> = {}): Omit<EmailClaimRecord, 'usedAt'> => ({
      tokenHash: uniq('c'), email: `${uniq('e')}@example.com`, signUp: { passwordHash: 'argon2-hash', displayName: 'Bea' }, createdAt: 1_000, expiresAt: 1_000 + DAY, ...over,
    });

    it('releases an address only while its holder has not verified it, to the placeholder, answering the holder', async () => {
      const squatter = await newUser();
      const placeholder = `${uniq('p')}@address-taken.invalid`;
      assert.equal(await store.users.releaseUnverified(squatter.email, placeholder), squatter.id);
      const after = await store.users.byId(squatter.id);
      assert.equal(after?.email, placeholder);
      assert.equal(after?.emailVerified, false);
      assert.equal(await store.users.byEmail(squatter.email), undefined, 'the address is free');
      assert.equal(await store.users.releaseUnverified(squatter.email, `${uniq('p')}@address-taken.invalid`), undefined, 'nobody holds it now');

      const holder = await newUser();
      assert.equal(await store.users.markEmailVerified(holder.id, holder.email, 5), true);
      assert.equal(await store.users.releaseUnverified(holder.email, `${uniq('p')}@address-taken.invalid`), undefined, 'verified: kept');
      assert.equal((await store.users.byId(holder.id))?.email, holder.email);
    });

    it('release, create and verify in one transaction; a failure rolls the release back', async () => {
      const squatter = await newUser();
      const taker = { id: uniq('u_'), email: squatter.email, displayName: 'Bea', passwordHash: 'h2', phone: null, phoneVerified: false, createdAt: 2000 };
      await store.transaction(async (repos) => {
        assert.equal(await repos.users.releaseUnverified(squatter.email, `${uniq('p')}@address-taken.invalid`), squatter.id);
        assert.equal(await repos.users.create(taker), true);
        assert.equal(await repos.users.markEmailVerified(taker.id, taker.email, 2000), true);
      });
      assert.equal((await store.users.byEmail(squatter.email))?.id, taker.id);
      assert.equal((await store.users.byEmail(squatter.email))?.emailVerified, true);

      const other = await newUser();
      await assert.rejects(store.transaction(async (repos) => {
        assert.equal(await repos.users.releaseUnverified(other.email, `${uniq('p')}@address-taken.invalid`), other.id);
        throw new Error('abort');
      }), /abort/);
      assert.equal((await store.users.byId(other.id))?.email, other.email, 'rolled back');
    });

    it('of racing releases of one address exactly one gets the holder', async () => {
      const squatter = await newUser();
      const results = await Promise.all(Array.from({ length: 6 }, () => store.users.releaseUnverified(squatter.email, `${uniq('p')}@address-taken.invalid`)));
      assert.deepEqual(results.filter((r) => r !== undefined), [squatter.id]);
    });

    it('a claim is peeked without being used, consumed once, and gives nothing expired or unknown', async () => {
      const c = claim();
      await store.emailClaims.create(c);
      assert.deepEqual(await store.emailClaims.peek(c.tokenHash, 2_000), { ...c, usedAt: null });
      assert.ok(await store.emailClaims.peek(c.tokenHash, 2_000), 'peeking does not use it');
      assert.equal(await store.emailClaims.peek(c.tokenHash, c.expiresAt), undefined, 'expired at expiresAt');
      assert.equal(await store.emailClaims.consume(c.tokenHash, c.expiresAt), undefined, 'expired');
      assert.equal(await store.emailClaims.consume(uniq('nope'), 2_000), undefined);
      const results = await Promise.all(Array.from({ length: 8 }, () => store.emailClaims.consume(c.tokenHash, 3_000)));
      assert.deepEqual(results.filter((r) => r !== undefined), [{ ...c, usedAt: 3_000 }], 'exactly one of the racing consumers');
      assert.equal(await store.emailClaims.peek(c.tokenHash, 3_001), undefined);
    });

    it('a consumed claim comes back unused when its transaction rolls back', async () => {
      const c = claim();
      await store.emailClaims.create(c);
      await assert.rejects(store.transaction(async (repos) => {
        assert.ok(await repos.emailClaims.consume(c.tokenHash, 2_000));
        throw new Error('abort');
      }), /abort/);
      assert.ok(await store.emailClaims.peek(c.tokenHash, 2_001));
    });

    it('purges claims that expired, used or not', async () => {
      const old = claim({ expiresAt: 10_000 });
      const live = claim({ expiresAt: 10 * DAY });
      await store.emailClaims.create(old);
      await store.emailClaims.create(live);
      assert.ok((await store.emailClaims.purgeExpired(20_000)) >= 1);
      assert.equal(await store.emailClaims.peek(old.tokenHash, 1), undefined);
      assert.ok(await store.emailClaims.peek(live.tokenHash, 1));
    });
  });
}
