import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { expectStatus, testApp, type TestApp } from './helpers/app.ts';
import { createAgent } from './helpers/agents.ts';
import { accessRequest, approve, ownerWithPasskey, respond, withPasskeySession } from './helpers/approvals.ts';
import type { Repos } from '../src/store/ports/index.ts';

// Issue 31, item 5: an owner's answer is saved with its activity record and its notices (the
// request's notifications read, its pushes dropped, a dismiss to every device) in one transaction.
// When the notices came after the commit, a failure there answered 5xx for an answer that had been
// kept: the owner, told it failed, answered again and got 409. Now a failure leaves nothing saved.

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`an owner's answer is all or nothing (${backend})`, () => {
    let t: TestApp;
    let failures = 0;
    before(async () => {
      t = await testApp({ backend });
      const store = t.services.store;
      // The next `failures` writes of the notices fail, as a disk error would, in a transaction or out of one.
      const failing = (outbox: Repos['outbox']): Repos['outbox'] => ({
        ...outbox,
        settleTopic: async (...args) => {
          if (failures === 0) return outbox.settleTopic(...args);
          failures--;
          throw Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' });
        },
      });
      store.outbox = failing(store.outbox);
      const transaction = store.transaction.bind(store);
      store.transaction = (work) => transaction((repos) => work({ ...repos, outbox: failing(repos.outbox) }));
    });
    after(() => t.close());

    const status = async (txnId: string) => (await t.services.store.authzRequests.byId(txnId))?.status;

    it('a denial that fails is not kept, and the owner can answer again', async () => {
      const owner = await withPasskeySession(t, await ownerWithPasskey(t));
      const agent = await createAgent(t, owner, 'Denied');
      const txnId = await accessRequest(t, agent);
      failures = 1;
      const failed = await respond(t, owner, txnId, { approve: false });
      assert.equal(failed.statusCode, 503, failed.body);
      assert.equal(await status(txnId), 'pending', 'nothing of the failed denial was saved');
      expectStatus(await respond(t, owner, txnId, { approve: false }), 200);
      assert.equal(await status(txnId), 'denied');
    });

    it('an approval that fails is not kept (no grant), and the owner can approve again', async () => {
      const owner = await withPasskeySession(t, await ownerWithPasskey(t));
      const agent = await createAgent(t, owner, 'Approved');
      const txnId = await accessRequest(t, agent);
      failures = 1;
      const failed = await approve(t, owner, txnId);
      assert.equal(failed.statusCode, 503, failed.body);
      assert.equal(await status(txnId), 'pending', 'nothing of the failed approval was saved');
      assert.equal(await t.services.store.grants.activeFor(agent.id, 'shop.example'), undefined, 'no grant from the failed approval');
      expectStatus(await approve(t, owner, txnId), 200);
      assert.equal(await status(txnId), 'approved');
    });
  });
}
