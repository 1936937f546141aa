import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AuthzRequestRecord, ReceiptRecord } from '../../src/store/ports/index.ts';
import { type OpenStore, useStore } from './use-store.ts';

let n = 0;
const uniq = (p: string): string => `${p}${Date.now().toString(36)}${(n++).toString(36)}`;
const DIGEST = 'n4bQgYhMfWWaL-qgxVrQFaO_TxsrC4Is0V1sFbDwCgg';

/** Approvals that can be proved (decisions §29, migration 030): bound details, challenge nonces, receipts. */
export function receiptsContract(name: string, open: OpenStore): void {
  describe(`store contract (receipts): ${name}`, () => {
    const store = useStore(open);

    const receipt = (over: Partial<ReceiptRecord> = {}): ReceiptRecord => ({
      txnId: uniq('t_'), userId: 'u_receipts', agentId: uniq('ag_'), site: 'shop.example', action: 'pay', detailsDigest: DIGEST,
      nonce: 'AAECAwQFBgcICQoLDA0ODw', approvedAt: 1_700_000_000_123, credentialId: 'Y3JlZA', authenticatorData: 'YXV0aA',
      clientDataJson: 'eyJ0eXBlIjoid2ViYXV0aG4uZ2V0In0', signature: 'c2ln', ...over,
    });

    it('records a receipt once per request and reads it back field for field, a null digest included', async () => {
      const a = receipt();
      assert.equal(await store.receipts.record(a), true);
      assert.deepEqual(await store.receipts.get(a.txnId), a);
      assert.equal(await store.receipts.record({ ...a, signature: 'b3RoZXI', nonce: 'other' }), false, 'a second receipt for one request is refused');
      assert.deepEqual(await store.receipts.get(a.txnId), a, 'the first one stays');
      const b = receipt({ detailsDigest: null });
      assert.equal(await store.receipts.record(b), true);
      assert.equal((await store.receipts.get(b.txnId))?.detailsDigest, null);
      assert.equal(await store.receipts.get(uniq('t_')), undefined);
      const raced = receipt();
      const results = await Promise.all(Array.from({ length: 10 }, () => store.receipts.record(raced)));
      assert.equal(results.filter(Boolean).length, 1, 'of concurrent writers exactly one stores it');
    });

    it("lists an owner's receipts in txn id order, page by page, and anonymises them for that owner only", async () => {
      const userId = uniq('u_');
      const other = receipt({ userId: uniq('u_') });
      const mine = ['t_c', 't_a', 't_b'].map((p) => receipt({ userId, txnId: uniq(p) }));
      for (const r of [...mine, other]) await store.receipts.record(r);
      const sorted = mine.map((r) => r.txnId).sort();
      assert.deepEqual((await store.receipts.listForUser(userId)).map((r) => r.txnId), sorted);
      const first = await store.receipts.listForUser(userId, '', 2);
      assert.deepEqual(first.map((r) => r.txnId), sorted.slice(0, 2));
      assert.deepEqual((await store.receipts.listForUser(userId, first[1]!.txnId, 2)).map((r) => r.txnId), sorted.slice(2));
      assert.equal(await store.receipts.anonymiseForUser(userId), 3);
      const blank = { action: '', detailsDigest: null, nonce: '', credentialId: '', authenticatorData: '', clientDataJson: '', signature: '' };
      assert.deepEqual(await store.receipts.listForUser(userId), [...mine].sort((a, b) => a.txnId.localeCompare(b.txnId)).map((r) => ({ ...r, ...blank })));
      assert.equal(await store.receipts.anonymiseForUser(userId), 0, 'twice changes nothing');
      assert.deepEqual(await store.receipts.get(other.txnId), other);
    });

    it('keeps the details a request is bound to; a request without them reads without the field', async () => {
      const base = (over: Partial<AuthzRequestRecord>): AuthzRequestRecord => ({
        id: uniq('t_'), kind: 'stepup', agentId: uniq('ag_'), userId: uniq('u_'), site: 'shop.example', scopes: [], userInfo: [], action: 'pay',
        status: 'pending', createdAt: 1_000, expiresAt: 301_000, decidedAt: null, grantId: null, oidc: null, ...over,
      });
      const bound = base({ boundDetails: { summary: 'Pay 12.00 EUR\nto Shop', digest: DIGEST } });
      const plain = base({});
      const approval = base({ kind: 'agent_approval', details: { label: 'Pay' }, boundDetails: { summary: 'Pay', digest: DIGEST } });
      for (const r of [bound, plain, approval]) assert.equal(await store.authzRequests.create(r), true);
      assert.deepEqual((await store.authzRequests.byId(bound.id))?.boundDetails, { summary: 'Pay 12.00 EUR\nto Shop', digest: DIGEST });
      assert.equal('boundDetails' in (await store.authzRequests.byId(plain.id))!, false);
      const read = await store.authzRequests.byId(approval.id);
      assert.deepEqual([read?.details, read?.boundDetails], [{ label: 'Pay' }, { summary: 'Pay', digest: DIGEST }]);

      // Migration 032: a step-up the site filed says so; an agent's carries no field.
      const bySite = base({ filedBy: 'site', boundDetails: { summary: 'Pay', digest: DIGEST } });
      assert.equal(await store.authzRequests.create(bySite), true);
      assert.deepEqual(await store.authzRequests.byId(bySite.id), bySite);
      assert.equal('filedBy' in (await store.authzRequests.byId(plain.id))!, false);
      const moved = await store.authzRequests.transition(bySite.id, ['pending'], 'approved', 2_000);
      assert.equal(moved?.filedBy, 'site', 'kept through a transition');
    });

    it('keeps the nonce of an approval challenge; other challenges have none', async () => {
      const c = uniq('ch');
      await store.challenges.create({ challenge: c, purpose: 'txn', userId: 'u_1', sessionHash: null, subject: 't_1', expiresAt: 10_000, nonce: 'AAECAwQFBgcICQoLDA0ODw' });
      assert.equal((await store.challenges.consume(c, 'txn', 5))?.nonce, 'AAECAwQFBgcICQoLDA0ODw');
      const d = uniq('ch');
      await store.challenges.create({ challenge: d, purpose: 'login', userId: null, sessionHash: null, subject: null, expiresAt: 10_000 });
      assert.equal((await store.challenges.consume(d, 'login', 5))?.nonce, null);
    });
  });
}
