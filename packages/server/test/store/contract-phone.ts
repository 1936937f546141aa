import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { PhoneCodeRecord } from '../../src/store/ports/index.ts';
import { type OpenStore, useStore } from './use-store.ts';

let n = 0;
const uniq = (p: string): string => `${p}${Date.now().toString(36)}${(n++).toString(36)}`;

/** The storage contract of phone codes and recovery codes (migration 019), on every backend. */
export function phoneContract(name: string, open: OpenStore): void {
  describe(`store contract (phone and recovery codes): ${name}`, () => {
    const store = useStore(open);
    const code = (over: Partial<PhoneCodeRecord> = {}): Omit<PhoneCodeRecord, 'usedAt'> => ({
      id: uniq('pc_'), userId: uniq('u_'), purpose: 'verify_phone', phone: '+12015550100', codeHash: 'ab'.repeat(32), attemptsLeft: 5, createdAt: 1_000, expiresAt: 601_000, ...over,
    });

    it('live answers the newest usable code; takeAttempt counts down to 0 and no further, even racing', async () => {
      const older = code();
      const newer = code({ userId: older.userId, createdAt: 2_000, expiresAt: 602_000 });
      await store.phoneCodes.create(older);
      await store.phoneCodes.create(newer);
      assert.equal((await store.phoneCodes.live(older.userId!, 'verify_phone', 3_000))?.id, newer.id);
      assert.equal(await store.phoneCodes.live(older.userId!, 'recovery', 3_000), undefined);
      const tries = await Promise.all(Array.from({ length: 9 }, () => store.phoneCodes.takeAttempt(newer.id, 3_000)));
      const taken = tries.filter((t) => t !== undefined).map((t) => t!.attemptsLeft).sort();
      assert.deepEqual(taken, [0, 1, 2, 3, 4]);
      assert.equal((await store.phoneCodes.live(older.userId!, 'verify_phone', 3_000))?.id, older.id, 'a code without tries is not live');
      assert.equal(await store.phoneCodes.takeAttempt(older.id, 601_000), undefined, 'expired: no try');
    });

    it('consume wins once among racers; revokeForUser ends unused codes; purge and deleteForUser remove rows', async () => {
      const c = code();
      await store.phoneCodes.create(c);
      const wins = await Promise.all(Array.from({ length: 6 }, () => store.phoneCodes.consume(c.id, 2_000)));
      assert.equal(wins.filter(Boolean).length, 1);
      const d = code({ userId: c.userId });
      await store.phoneCodes.create(d);
      assert.equal(await store.phoneCodes.revokeForUser(c.userId!, 'verify_phone', 2_000), 1);
      assert.equal(await store.phoneCodes.consume(d.id, 2_000), false);
      await store.phoneCodes.create(code({ userId: null, purpose: 'recovery', attemptsLeft: 0 }));
      assert.ok((await store.phoneCodes.purgeExpired(700_000)) >= 3);
      const e = code();
      await store.phoneCodes.create(e);
      assert.equal(await store.phoneCodes.deleteForUser(e.userId!), 1);
    });

    it('recovery codes: replace voids the old set; each is consumed once (racing: one wins); has/countUnused; deleteForUser', async () => {
      const userId = uniq('u_');
      await store.transaction(async (repos) => repos.recoveryCodes.replace(userId, [`${userId}-a`, `${userId}-b`], 1_000));
      assert.equal(await store.recoveryCodes.countUnused(userId), 2);
      assert.equal(await store.recoveryCodes.has(userId, `${userId}-a`), true);
      assert.equal(await store.recoveryCodes.has(uniq('other'), `${userId}-a`), false, 'another account\'s code');
      const wins = await Promise.all(Array.from({ length: 5 }, () => store.recoveryCodes.consume(userId, `${userId}-a`, 2_000)));
      assert.equal(wins.filter(Boolean).length, 1);
      assert.equal(await store.recoveryCodes.has(userId, `${userId}-a`), false);
      assert.equal(await store.recoveryCodes.countUnused(userId), 1);
      await store.recoveryCodes.replace(userId, [`${userId}-c`], 3_000);
      assert.equal(await store.recoveryCodes.consume(userId, `${userId}-b`, 3_000), false, 'the old set is void');
      assert.equal(await store.recoveryCodes.countUnused(userId), 1);
      assert.equal(await store.recoveryCodes.deleteForUser(userId), 1);
    });
  });
}
