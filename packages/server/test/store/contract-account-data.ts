import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AuthzRequestRecord, EmailTokenRecord, RequestStatus } from '../../src/store/ports/index.ts';
import { type OpenStore, useStore } from './use-store.ts';

let n = 0;
const uniq = (p: string): string => `${p}${Date.now().toString(36)}${(n++).toString(36)}`;
const HOUR = 3_600_000;

/**
 * The storage contract of a forgotten password and the data export (issue 23, items 4 and 6), on
 * every backend: password-reset links among the mailed links, and an owner's requests page by page.
 */
export function accountDataContract(name: string, open: OpenStore): void {
  describe(`store contract (account data): ${name}`, () => {
    const store = useStore(open);

    const newUser = async () => {
      const user = { id: uniq('u_'), email: `${uniq('u')}@example.com`, displayName: 'Ann', passwordHash: 'h', phone: null, phoneVerified: false, createdAt: 1000 };
      assert.equal(await store.users.create(user), true);
      return user;
    };
    const link = (u: { id: string; email: string }, over: Partial<EmailTokenRecord> = {}): Omit<EmailTokenRecord, 'usedAt'> => ({
      tokenHash: uniq('h'), purpose: 'reset_password', userId: u.id, email: u.email, subject: null, createdAt: 1_000, expiresAt: 1_000 + HOUR, ...over,
    });

    it('a password-reset link is its own purpose: used once, within its hour, and voided apart from verification links', async () => {
      const u = await newUser();
      const reset = link(u);
      const verify = link(u, { purpose: 'verify_email', expiresAt: 1_000 + 24 * HOUR });
      await store.emailTokens.create(reset);
      await store.emailTokens.create(verify);
      assert.equal(await store.emailTokens.peek(reset.tokenHash, 'verify_email', 2_000), undefined, 'not as another purpose');
      assert.equal((await store.emailTokens.peek(reset.tokenHash, 'reset_password', 2_000))?.purpose, 'reset_password');
      assert.equal(await store.emailTokens.consume(reset.tokenHash, 'reset_password', 1_000 + HOUR, { sameEmail: true }), undefined, 'expired at its hour');
      const fresh = link(u);
      await store.emailTokens.create(fresh);
      assert.equal(await store.emailTokens.revokeForUser(u.id, 'reset_password', 2_000), 2, 'both reset links (one expired but unused) are voided');
      assert.equal(await store.emailTokens.consume(fresh.tokenHash, 'reset_password', 2_000, { sameEmail: true }), undefined);
      assert.ok(await store.emailTokens.peek(verify.tokenHash, 'verify_email', 2_000), 'the verification link stays');
    });

    it('of many concurrent consumers of one reset link exactly one wins', async () => {
      const u = await newUser();
      const l = link(u);
      await store.emailTokens.create(l);
      const got = await Promise.all(Array.from({ length: 12 }, () => store.emailTokens.consume(l.tokenHash, 'reset_password', 2_000, { sameEmail: true })));
      assert.equal(got.filter(Boolean).length, 1);
    });

    it('pageForUser walks every request of one owner, whatever its status, in id order, and nothing of another', async () => {
      const owner = uniq('u_');
      const other = uniq('u_');
      const statuses: RequestStatus[] = ['pending', 'approved', 'denied', 'expired', 'consumed'];
      const mine: AuthzRequestRecord[] = [];
      for (let i = 0; i < 12; i++) {
        const r: AuthzRequestRecord = {
          id: uniq('t_'), kind: i % 2 ? 'stepup' : 'initial', agentId: uniq('ag_'), userId: owner, site: `s${i}.example`, scopes: ['list'], userInfo: [],
          action: null, status: statuses[i % statuses.length] ?? 'pending', createdAt: 1000 + i, expiresAt: 301_000, decidedAt: null, grantId: null, oidc: null,
        };
        assert.equal(await store.authzRequests.create(r), true);
        mine.push(r);
      }
      await store.authzRequests.create({ ...mine[0]!, id: uniq('t_'), userId: other, agentId: uniq('ag_') });
      const seen: AuthzRequestRecord[] = [];
      let after = '';
      for (;;) {
        const page = await store.authzRequests.pageForUser(owner, after, 5);
        seen.push(...page);
        if (page.length < 5) break;
        after = page.at(-1)!.id;
      }
      assert.deepEqual(seen.map((r) => r.id), mine.map((r) => r.id).sort());
      assert.deepEqual(seen.find((r) => r.id === mine[3]!.id), mine[3]);
      assert.deepEqual(await store.authzRequests.pageForUser(uniq('u_'), '', 5), []);
    });
  });
}
