import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { purgeExpired } from '../src/domain/housekeeping.ts';
import { REQUEST_LIFETIME_MS } from '../src/domain/approvals/request-rules.ts';
import { createAgent, type TestAgent } from './helpers/agents.ts';
import { expectStatus, json, remoteAddress, type TestApp, testApp } from './helpers/app.ts';
import { accessRequest, assertionOptions, grantAccess, type Owner, ownerWithPasskey, poll, postAccessRequest, respond } from './helpers/approvals.ts';
import { verifyEmail } from './helpers/email-links.ts';

interface Item {
  seq: number;
  action: string;
  agent_id: string | null;
  agent_name: string | null;
  site: string | null;
  detail: Record<string, unknown>;
  created_at: string;
}

/**
 * A request nobody answered leaves a `request.expired` record in the owner's Activity, exactly once,
 * whichever notices first: the expiry sweep, the agent polling, the agent asking again, or the owner
 * answering too late.
 */
for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`requests that expire unanswered are recorded in Activity (${backend})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp({ backend });
    });
    after(() => t.close());

    const expiredRecords = async (owner: Owner): Promise<Item[]> => {
      const res = await t.app.inject({ url: '/api/activity?action=request.expired', headers: owner.auth });
      expectStatus(res, 200);
      return json<{ items: Item[] }>(res).items;
    };
    const pastExpiry = () => t.clock.advance(REQUEST_LIFETIME_MS + 1000);

    async function stepup(agent: TestAgent, action: string): Promise<string> {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/stepup', remoteAddress: remoteAddress(), payload: { agent_id: agent.id, site: 'shop.example', action, agent_jwt: await agent.jwt() } });
      expectStatus(res, 200);
      return json<{ txn_id: string }>(res).txn_id;
    }

    it('after the agent polls: one record naming the agent, the site, the request and what it asked', async () => {
      const owner = await ownerWithPasskey(t);
      await verifyEmail(t, owner);
      const agent = await createAgent(t, owner, 'Shopper');
      const txn = await accessRequest(t, agent, { scopes: ['orders:read'], user_info: ['user:email'] });
      const expiresAt = t.clock.now() + REQUEST_LIFETIME_MS;
      assert.deepEqual(await expiredRecords(owner), [], 'nothing while it waits');
      pastExpiry();

      const polled = await poll(t, txn);
      expectStatus(polled, 200);
      assert.equal(json<{ status: string }>(polled).status, 'expired');
      const [item, ...more] = await expiredRecords(owner);
      assert.deepEqual(more, []);
      assert.deepEqual(item && { action: item.action, agent_id: item.agent_id, agent_name: item.agent_name, site: item.site, detail: item.detail }, {
        action: 'request.expired',
        agent_id: agent.id,
        agent_name: 'Shopper',
        site: 'shop.example',
        detail: { txn_id: txn, kind: 'initial', scopes: ['orders:read'], user_info: ['user:email'], expired_at: new Date(expiresAt).toISOString() },
      });

      // Later polls, and the sweep, find nothing more to record.
      expectStatus(await poll(t, txn), 200);
      await purgeExpired(t.services.store, t.clock);
      assert.equal((await expiredRecords(owner)).length, 1);
    });

    it('after the expiry sweep, for access and step-up requests alike, without anyone polling', async () => {
      const owner = await ownerWithPasskey(t);
      const agent = await createAgent(t, owner, 'Payer');
      await grantAccess(t, owner, agent);
      const stepupTxn = await stepup(agent, 'pay 42 EUR to ACME');
      const other = await createAgent(t, owner, 'Reader');
      const accessTxn = await accessRequest(t, other, { site: 'news.example', scopes: ['read'] });
      pastExpiry();

      const swept = await purgeExpired(t.services.store, t.clock);
      assert.ok((swept['requests'] ?? 0) >= 2, JSON.stringify(swept));
      const items = await expiredRecords(owner);
      const byTxn = new Map(items.map((i) => [i.detail['txn_id'], i]));
      assert.equal(items.length, 2);
      assert.deepEqual(byTxn.get(stepupTxn) && { agent: byTxn.get(stepupTxn)?.agent_name, site: byTxn.get(stepupTxn)?.site, kind: byTxn.get(stepupTxn)?.detail['kind'], action: byTxn.get(stepupTxn)?.detail['action'] },
        { agent: 'Payer', site: 'shop.example', kind: 'stepup', action: 'pay 42 EUR to ACME' });
      assert.deepEqual(byTxn.get(accessTxn) && { agent: byTxn.get(accessTxn)?.agent_name, site: byTxn.get(accessTxn)?.site, kind: byTxn.get(accessTxn)?.detail['kind'], scopes: byTxn.get(accessTxn)?.detail['scopes'] },
        { agent: 'Reader', site: 'news.example', kind: 'initial', scopes: ['read'] });

      // The agent polling afterwards reads expired and adds nothing.
      assert.equal(json<{ status: string }>(await poll(t, accessTxn)).status, 'expired');
      assert.equal((await expiredRecords(owner)).length, 2);
    });

    it('when the agent asks again, or the owner answers too late', async () => {
      const owner = await ownerWithPasskey(t);
      const agent = await createAgent(t, owner);
      const first = await accessRequest(t, agent);
      pastExpiry();
      const again = await postAccessRequest(t, agent);
      expectStatus(again, 200);
      assert.deepEqual((await expiredRecords(owner)).map((i) => i.detail['txn_id']), [first]);

      const second = json<{ txn_id: string }>(again).txn_id;
      const options = await assertionOptions(t, owner, second);
      pastExpiry();
      const late = await respond(t, owner, second, { approve: true, assertion: owner.authenticator.assert(options) });
      expectStatus(late, 409);
      expectStatus(await respond(t, owner, second, { approve: false }), 409);
      assert.deepEqual((await expiredRecords(owner)).map((i) => i.detail['txn_id']), [second, first]);
    });

    it('is recorded once when the sweep and polls race', async () => {
      const owner = await ownerWithPasskey(t);
      const agent = await createAgent(t, owner);
      const txn = await accessRequest(t, agent, { site: 'race.example' });
      pastExpiry();
      const sweeps = [purgeExpired(t.services.store, t.clock), purgeExpired(t.services.store, t.clock)];
      const polls = [poll(t, txn), poll(t, txn), poll(t, txn)];
      await Promise.all(sweeps);
      for (const res of await Promise.all(polls)) assert.equal(json<{ status: string }>(res).status, 'expired');
      assert.equal((await expiredRecords(owner)).length, 1);
    });

    it('answered requests and requests still waiting are not recorded as expired', async () => {
      const owner = await ownerWithPasskey(t);
      const agent = await createAgent(t, owner);
      await grantAccess(t, owner, agent, { site: 'answered.example' });
      const denied = await accessRequest(t, agent, { site: 'denied.example' });
      expectStatus(await respond(t, owner, denied, { approve: false }), 200);
      pastExpiry();
      await accessRequest(t, agent, { site: 'waiting.example' });
      await purgeExpired(t.services.store, t.clock);
      assert.deepEqual(await expiredRecords(owner), []);
    });
  });
}
