import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { EmailTokenRecord } from '../../src/store/ports/index.ts';
import { type OpenStore, useStore } from './use-store.ts';

let n = 0;
const uniq = (p: string): string => `${p}${Date.now().toString(36)}${(n++).toString(36)}`;
const DAY = 86_400_000;

/** The storage contract of email verification and mailed links (migration 011), on every backend. */
export function emailContract(name: string, open: OpenStore): void {
  describe(`store contract (email): ${name}`, () => {
    const store = useStore(open);

    const newUser = async (email = `${uniq('u')}@example.com`) => {
      const user = { id: uniq('u_'), email, displayName: 'Ann', passwordHash: 'h', phone: null, phoneVerified: false, createdAt: 1000 };
      assert.equal(await store.users.create(user), true);
      return user;
    };
    const token = (u: { id: string; email: string }, over: Partial<EmailTokenRecord> = {}): Omit<EmailTokenRecord, 'usedAt'> => ({
      tokenHash: uniq('h'), purpose: 'verify_email', userId: u.id, email: u.email, subject: null, createdAt: 1_000, expiresAt: 1_000 + DAY, ...over,
    });

    it('a new account is unverified; verification holds only for the address it was for', async () => {
      const u = await newUser();
      assert.equal((await store.users.byId(u.id))?.emailVerified, false);
      assert.equal(await store.users.markEmailVerified(u.id, 'other@example.com', 5), false, 'another address');
      assert.equal((await store.users.byId(u.id))?.emailVerified, false);
      assert.equal(await store.users.markEmailVerified(u.id, u.email, 5), true);
      assert.equal((await store.users.byEmail(u.email))?.emailVerified, true);
    });

    it('changing the email clears verification; a taken address is refused and nothing changes; the same address is a no-op', async () => {
      const u = await newUser();
      const other = await newUser();
      await store.users.markEmailVerified(u.id, u.email, 5);
      assert.equal(await store.users.changeEmail(u.id, u.email), true, 'unchanged');
      assert.equal((await store.users.byId(u.id))?.emailVerified, true, 'unchanged keeps verification');
      assert.equal(await store.users.changeEmail(u.id, other.email), false, 'taken');
      assert.equal((await store.users.byId(u.id))?.email, u.email);
      assert.equal((await store.users.byId(u.id))?.emailVerified, true);
      const fresh = `${uniq('n')}@example.com`;
      assert.equal(await store.users.changeEmail(u.id, fresh), true);
      const after = await store.users.byId(u.id);
      assert.equal(after?.email, fresh);
      assert.equal(after?.emailVerified, false);
      assert.equal(await store.users.byEmail(u.email), undefined, 'the old address is free again');
      // Inside a transaction too (PostgreSQL aborts a transaction on any failed statement: a taken address must not be one).
      const inTx = await store.transaction(async (repos) => {
        const taken = await repos.users.changeEmail(u.id, other.email);
        const read = await repos.users.byId(u.id);
        return { taken, email: read?.email };
      });
      assert.deepEqual(inTx, { taken: false, email: fresh });
    });

    it('two accounts racing for one free address: exactly one gets it', async () => {
      const a = await newUser();
      const b = await newUser();
      const target = `${uniq('race')}@example.com`;
      const results = await Promise.all([store.users.changeEmail(a.id, target), store.users.changeEmail(b.id, target)]);
      assert.equal(results.filter(Boolean).length, 1, String(results));
      assert.ok((await store.users.byEmail(target))?.id);
    });

    it('a link is peeked without being used, then consumed once; expired, unknown or other-purpose links give nothing', async () => {
      const u = await newUser();
      const t = token(u);
      await store.emailTokens.create(t);
      const peeked = await store.emailTokens.peek(t.tokenHash, 'verify_email', 2_000);
      assert.deepEqual(peeked, { ...t, usedAt: null });
      assert.ok(await store.emailTokens.peek(t.tokenHash, 'verify_email', 2_000), 'peeking does not use it');
      assert.equal(await store.emailTokens.peek(t.tokenHash, 'undo_passkey', 2_000), undefined);
      assert.equal(await store.emailTokens.consume(t.tokenHash, 'undo_passkey', 2_000, { sameEmail: false }), undefined, 'another purpose');
      assert.equal(await store.emailTokens.peek(t.tokenHash, 'verify_email', t.expiresAt), undefined, 'expired at expiresAt');
      assert.equal(await store.emailTokens.consume(t.tokenHash, 'verify_email', t.expiresAt, { sameEmail: true }), undefined, 'expired');
      assert.deepEqual(await store.emailTokens.consume(t.tokenHash, 'verify_email', 3_000, { sameEmail: true }), { ...t, usedAt: 3_000 });
      assert.equal(await store.emailTokens.consume(t.tokenHash, 'verify_email', 3_001, { sameEmail: true }), undefined, 'used');
      assert.equal(await store.emailTokens.peek(t.tokenHash, 'verify_email', 3_001), undefined);
      assert.equal(await store.emailTokens.consume(uniq('nope'), 'verify_email', 3_000, { sameEmail: false }), undefined);
    });

    it('a link to an old address is refused once the address changed (sameEmail); an undo link is not bound to the current address', async () => {
      const u = await newUser();
      const verify = token(u);
      const undo = token(u, { purpose: 'undo_passkey', subject: 'dev_x' });
      await store.emailTokens.create(verify);
      await store.emailTokens.create(undo);
      assert.equal(await store.users.changeEmail(u.id, `${uniq('moved')}@example.com`), true);
      assert.equal(await store.emailTokens.consume(verify.tokenHash, 'verify_email', 2_000, { sameEmail: true }), undefined);
      assert.equal((await store.emailTokens.consume(undo.tokenHash, 'undo_passkey', 2_000, { sameEmail: false }))?.subject, 'dev_x');
    });

    it('revokeForUser ends the unused links of one purpose of one account only', async () => {
      const u = await newUser();
      const other = await newUser();
      const a = token(u);
      const b = token(u);
      const undo = token(u, { purpose: 'undo_passkey', subject: 'dev_y' });
      const theirs = token(other);
      for (const t of [a, b, undo, theirs]) await store.emailTokens.create(t);
      assert.ok(await store.emailTokens.consume(a.tokenHash, 'verify_email', 1_500, { sameEmail: true }));
      assert.equal(await store.emailTokens.revokeForUser(u.id, 'verify_email', 2_000), 1, 'only b was unused');
      assert.equal(await store.emailTokens.peek(b.tokenHash, 'verify_email', 2_001), undefined);
      assert.ok(await store.emailTokens.peek(undo.tokenHash, 'undo_passkey', 2_001));
      assert.ok(await store.emailTokens.peek(theirs.tokenHash, 'verify_email', 2_001));
    });

    it('of many concurrent consumers of one link exactly one wins', async () => {
      const u = await newUser();
      const t = token(u);
      await store.emailTokens.create(t);
      const results = await Promise.all(Array.from({ length: 8 }, () => store.emailTokens.consume(t.tokenHash, 'verify_email', 2_000, { sameEmail: true })));
      assert.equal(results.filter((r) => r !== undefined).length, 1);
    });

    it('purges links that expired, used or not; a deleted account takes its links with it', async () => {
      const u = await newUser();
      const old = token(u, { expiresAt: 10_000 });
      const live = token(u, { expiresAt: 10 * DAY });
      await store.emailTokens.create(old);
      await store.emailTokens.create(live);
      assert.ok((await store.emailTokens.purgeExpired(20_000)) >= 1);
      assert.equal(await store.emailTokens.peek(old.tokenHash, 'verify_email', 1), undefined);
      assert.ok(await store.emailTokens.peek(live.tokenHash, 'verify_email', 1));
    });
  });
}
