import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { expectStatus, json, signUp, testApp, type TestApp } from './helpers/app.ts';
import { createAgent, createGrant } from './helpers/agents.ts';
import { getPass, verify, verifyBody } from './helpers/passes.ts';

/** Account deletion and the data export with operators (decisions §16, §17), on SQLite and PostgreSQL. */
for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`operators: account deletion and export (${backend})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp({ backend, env: { OUTBOX_POLL_MS: '600000' } });
    });
    after(() => t.close());

    it('deleting the registrant\'s account deletes its operators and blocks the agents they made for others; the export lists them before', async () => {
      const registrant = await signUp(t.app);
      const res = await t.app.inject({ method: 'POST', url: '/api/operators', headers: registrant.auth, payload: { name: 'Acme agents', redirect_uris: ['https://acme.example/cb'], browser: 'user' } });
      expectStatus(res, 200);
      const { id: oid, secret } = json<{ id: string; secret: string }>(res);

      const exported = await t.app.inject({ url: '/api/export', headers: registrant.auth });
      expectStatus(exported, 200);
      const doc = JSON.parse(exported.body) as { operators: { id: string; name: string; browser: string; status: string }[] };
      assert.deepEqual(doc.operators.map((o) => [o.id, o.name, o.browser, o.status]), [[oid, 'Acme agents', 'user', 'pending']]);
      assert.ok(!exported.body.includes(secret), 'never the secret');
      const row = await t.services.store.operators.byId(oid);
      assert.ok(row && !exported.body.includes(row.secretHash) && !exported.body.includes(row.verificationToken), 'nor its hash or token');

      const someoneElse = await createAgent(t);
      await t.services.store.operators.attachAgent(someoneElse.id, { operatorId: oid, connectionId: 'cn_test', browser: 'user' });
      await createGrant(t, someoneElse);
      const pass = (await getPass(t, someoneElse)).access_token;
      const untouched = await createAgent(t);

      expectStatus(await t.app.inject({ method: 'POST', url: '/api/account/delete', headers: registrant.auth, payload: { confirm: registrant.email, password: registrant.password } }), 200);
      assert.equal(await t.services.store.operators.byId(oid), undefined, 'the operator is gone');
      assert.equal(await t.services.operators.authenticate(oid, secret), undefined, 'its secret opens nothing');
      assert.equal((await t.services.store.agents.byId(someoneElse.id))?.status, 'blocked', 'its agents are blocked');
      assert.equal((await verify(t, await verifyBody(t, someoneElse, pass))).error, 'agent_revoked');
      assert.equal((await t.services.store.agents.byId(untouched.id))?.status, 'active');
      expectStatus(await t.app.inject({ method: 'DELETE', url: `/api/agents/${someoneElse.id}`, headers: someoneElse.owner.auth }), 200);
      assert.equal((await t.services.store.agents.byId(someoneElse.id))?.status, 'removed', 'its owner can remove it');
    });
  });
}
