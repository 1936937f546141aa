import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { detailsDigestOf } from '@mandate/protocol';
import { type Child, runTs } from '../../server/test/helpers/child-process.ts';
import { freePort } from '../../server/test/helpers/server-process.ts';
import { type AgentWithPass, type Mandate, RealClock, agentRequest, agentWithPass, startMandate, stepupFor } from './helpers/mandate.ts';

// examples/demo-shop as its own process, started the way its README says, in both modes, against a
// real Mandate; this test plays the agents (passes from Mandate, proofs signed here).

describe('demo shop', () => {
  let m: Mandate;
  before(async () => {
    m = await startMandate({ clock: new RealClock() });
  });
  after(() => m.close());

  for (const mode of ['cloud', 'local'] as const) {
    describe(`${mode} mode`, () => {
      let shop: Child;
      let base = '';

      before(async () => {
        const port = await freePort();
        base = `http://127.0.0.1:${port}`;
        shop = runTs('examples/demo-shop/shop.ts', { env: { MANDATE_URL: m.url, MANDATE_MODE: mode, SITE_ID: 'shop.example', PUBLIC_BASE_URL: base, PORT: String(port), HOST: '127.0.0.1' } });
        await shop.waitFor('demo shop listening on');
      });
      after(async () => {
        await shop.stop();
      });

      async function call(a: AgentWithPass | null, method: string, path: string, o: { body?: unknown; stepup?: string } = {}) {
        const headers: Record<string, string> = o.body === undefined ? {} : { 'content-type': 'application/json' };
        if (a) {
          const r = await agentRequest(m, a, { method, path, base, ...(o.stepup === undefined ? {} : { stepup: o.stepup }) });
          for (const [k, v] of Object.entries(r.headers as Record<string, string>)) if (k !== 'host') headers[k] = v;
        }
        const res = await fetch(base + path, { method, headers, ...(o.body === undefined ? {} : { body: typeof o.body === 'string' ? o.body : JSON.stringify(o.body) }) });
        return { status: res.status, body: (await res.json()) as Record<string, any> };
      }

      it('prints its URL and mode and answers in public what it is', async () => {
        assert.match(shop.output(), new RegExp(`demo shop listening on ${base} \\(site shop\\.example, public URL ${base}, ${mode} mode, Mandate at ${m.url}\\)`));
        const info = await call(null, 'GET', '/');
        assert.equal(info.status, 200);
        assert.equal(info.body['mode'], mode);
        assert.equal((await call(null, 'GET', '/healthz')).status, 200);
      });

      it('GET /products needs a pass with scope list', async () => {
        assert.deepEqual((await call(null, 'GET', '/products')).body['error'], 'invalid_request');
        const a = await agentWithPass(m, { scopes: ['list'] });
        const r = await call(a, 'GET', '/products');
        assert.equal(r.status, 200);
        assert.equal(r.body['products'].length, 3);
        assert.equal(r.body['agent'].id, a.agent.id);
        assert.equal(r.body['agent'].name, mode === 'cloud' ? 'Shopper' : undefined);
      });

      it('GET /orders needs orders:read', async () => {
        const r = await call(await agentWithPass(m, { scopes: ['list'] }), 'GET', '/orders');
        assert.deepEqual([r.status, r.body['error']], [403, 'insufficient_scope']);
      });

      it('POST /checkout by a pass without checkout: 403 insufficient_scope, the owner is not asked for a step-up', async () => {
        const r = await call(await agentWithPass(m, { scopes: ['list', 'orders:read'] }), 'POST', '/checkout', { body: { product_id: 'p2', quantity: 1 } });
        assert.deepEqual([r.status, r.body['error'], r.body['action']], [403, 'insufficient_scope', undefined]);
      });

      it('POST /checkout: cheap checks first, then the step-up naming what is bought, then the order', async () => {
        const a = await agentWithPass(m, { scopes: ['list', 'orders:read', 'checkout'] });
        assert.equal((await call(a, 'POST', '/checkout', { body: { product_id: 'p9' } })).status, 404);
        assert.equal((await call(a, 'POST', '/checkout', { body: { product_id: 'p1', quantity: 0 } })).status, 400);
        assert.equal((await call(a, 'POST', '/checkout', { body: { product_id: 'p1', quantity: 9 } })).status, 409, 'only 5 lamps');
        assert.equal((await call(a, 'POST', '/checkout', { body: '{"product_id": ' })).status, 400);

        const basket = { product_id: 'p1', quantity: 2 };
        const needsStepup = await call(a, 'POST', '/checkout', { body: basket });
        assert.deepEqual(
          [needsStepup.status, needsStepup.body['error'], needsStepup.body['action'], needsStepup.body['summary']],
          [403, 'stepup_required', 'buy 2 x Desk lamp for 39.80 EUR', '2 × Desk lamp, 39.80 EUR, to Demo Shop'],
        );

        // The checkout binds its body: a step-up approved for another body (here one the action does not tell
        // apart), or for no details, is refused and not used up.
        const stepup = await stepupFor(m, a, String(needsStepup.body['action']), { details_digest: detailsDigestOf(basket) });
        const otherBasket = await call(a, 'POST', '/checkout', { body: { ...basket, coupon: 'FREE' }, stepup });
        assert.deepEqual([otherBasket.status, otherBasket.body['error']], [403, 'stepup_wrong_details'], JSON.stringify(otherBasket.body));
        const unbound = await call(a, 'POST', '/checkout', { body: basket, stepup: await stepupFor(m, a, String(needsStepup.body['action'])) });
        assert.deepEqual([unbound.status, unbound.body['error']], [403, 'stepup_wrong_details']);

        const bought = await call(a, 'POST', '/checkout', { body: { product_id: 'p1', quantity: 2 }, stepup });
        assert.equal(bought.status, 201, JSON.stringify(bought.body));
        assert.deepEqual(
          { ...bought.body['order'], id: 'o', created_at: 't' },
          { id: 'o', created_at: 't', product_id: 'p1', product_name: 'Desk lamp', quantity: 2, total: '39.80', currency: 'EUR', user_id: a.agent.owner.user.id, agent_id: a.agent.id },
        );
        const again = await call(a, 'POST', '/checkout', { body: { product_id: 'p1', quantity: 2 }, stepup });
        assert.deepEqual([again.status, again.body['error']], [401, 'stepup_used_or_expired']);

        const orders = await call(a, 'GET', '/orders');
        assert.deepEqual(orders.body['orders'].map((o: { id: string }) => o.id), [bought.body['order'].id]);
        const stranger = await call(await agentWithPass(m, { scopes: ['orders:read'] }), 'GET', '/orders');
        assert.deepEqual(stranger.body['orders'], [], 'each person sees their own orders');
      });

      it('exits cleanly on SIGTERM', async () => {
        assert.equal(await shop.stop(), 0);
      });
    });
  }
});

describe('demo shop on a port already in use', () => {
  it('says so in one line naming the port and PORT, and exits with status 1, without a stack trace', async () => {
    const port = await freePort();
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', resolve));
    try {
      const shop = runTs('examples/demo-shop/shop.ts', { env: { PORT: String(port), HOST: '127.0.0.1', MANDATE_URL: 'http://127.0.0.1:9' } });
      assert.equal(await shop.exited, 1, shop.output());
      assert.equal(shop.output().trim(), `demo shop: port ${port} is already in use (another example running?); start it with PORT=<a free port> npm run demo:shop`);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });
});
