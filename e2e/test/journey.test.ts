import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MandateAgent } from '@mandate/agent';
import { detailsDigestOf } from '@mandate/site';
import { type AgentCli, type CliResult, show } from './helpers/cli.ts';
import { Deployment, SITE } from './helpers/deployment.ts';
import type { Shop } from './helpers/shop.ts';

// One agent's life at the demo shop, every part a real process: the Mandate service, the shop in
// cloud and in local mode, the agent as the `mandate-agent` CLI; the test plays the owner (passkey
// approvals over HTTP) and an admin. The tests build on each other in order: access first.

const LAMP = '{"product_id":"p1","quantity":1}';
const LAMP_ACTION = 'buy 1 x Desk lamp for 19.90 EUR';
/** What the shop suggests the owner reads for that basket; the step-up is bound to the body's digest. */
const LAMP_DETAILS = { summary: '1 × Desk lamp, 19.90 EUR, to Demo Shop', digest: detailsDigestOf(JSON.parse(LAMP)) };

/** The `kid` in a JWT's protected header. */
function kidOf(jwt: string): unknown {
  return (JSON.parse(Buffer.from(jwt.split('.')[0] ?? '', 'base64url').toString()) as { kid?: unknown }).kid;
}

/** The site's answer as `call --json` prints it. */
function answer(r: CliResult): { status: unknown; body: Record<string, unknown> } {
  return { status: r.json?.['status'], body: (r.json?.['body'] ?? {}) as Record<string, unknown> };
}

describe('an agent at the demo shop through the CLI', () => {
  let d: Deployment;
  let agent: AgentCli;

  before(async () => {
    // rev_ttl 2 s as in the revocation tests; max_stale 10 s (the default 5 x rev_ttl).
    d = await Deployment.start({ local: { revTtlSec: 2, maxStaleSec: 10 }, withAdmin: true });
    agent = await d.newAgent('Shopper');
  });
  after(async () => {
    await d?.stop();
  });

  const call = (shop: Shop, path: string, ...flags: string[]) => agent.run('call', '--site', SITE, ...flags, shop.url + path);
  const both = () => [d.cloud, d.local];

  it('first access: refused before the owner approves; after the passkey approval the CLI lists products and reads orders at the cloud and the local shop', async () => {
    const early = await call(d.cloud, '/products');
    assert.equal(early.code, 1, show(early));
    assert.equal((early.json?.['error'] as { code?: string } | undefined)?.code, 'access_required', show(early));

    await d.grantAccess(agent);

    for (const shop of both()) {
      const products = await call(shop, '/products');
      assert.equal(products.code, 0, `${shop.mode}: ${show(products)}\n${d.logs()}`);
      assert.equal(answer(products).status, 200);
      assert.deepEqual((answer(products).body['products'] as { id: string }[]).map((p) => p.id), ['p1', 'p2', 'p3']);
      assert.equal((answer(products).body['agent'] as { id: string }).id, agent.agentId, 'the shop knows which agent called');

      const orders = await call(shop, '/orders');
      assert.equal(orders.code, 0, `${shop.mode}: ${show(orders)}`);
      assert.deepEqual(answer(orders), { status: 200, body: { orders: [] } });
    }
  });

  it('refresh: the CLI renews the pass with its refresh token, the old refresh token is refused, the new pass works at both shops', async () => {
    const before = agent.siteState(SITE);
    const renewed = await agent.run('token', '--site', SITE, '--refresh');
    assert.equal(renewed.code, 0, show(renewed));
    assert.equal(renewed.json?.['fetched'], true, 'a new pass from the service');
    const kept = agent.siteState(SITE);
    assert.notEqual(kept.accessToken, before.accessToken, 'a new pass');
    assert.notEqual(kept.refreshToken, before.refreshToken, 'the refresh token rotated');

    // The replaced refresh token, sent again as the agent: refused.
    const jwt = await MandateAgent.fromDirectory(agent.dir).agentJwt();
    const replay = await fetch(`${d.server.url}/api/v1/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ agent_id: agent.agentId, site: SITE, agent_jwt: jwt, refresh_token: before.refreshToken }),
    });
    assert.equal(replay.status, 401, await replay.text());

    for (const shop of both()) {
      const r = await call(shop, '/products');
      assert.equal(r.code, 0, `${shop.mode}: ${show(r)}`);
    }
    assert.equal(agent.siteState(SITE).accessToken, kept.accessToken, 'the calls used the renewed pass, no further renewal');
  });

  it('step-up purchase: checkout answers 403 stepup_required, the CLI asks the owner (bound to the body), retries with X-Service-Stepup and buys; the order is listed', async () => {
    for (const shop of both()) {
      const refused = await call(shop, '/checkout', '-d', LAMP, '--no-stepup');
      assert.equal(refused.code, 1, show(refused));
      assert.deepEqual(
        [answer(refused).status, answer(refused).body['error'], answer(refused).body['action'], answer(refused).body['summary']],
        [403, 'stepup_required', LAMP_ACTION, LAMP_DETAILS.summary],
      );

      const buying = call(shop, '/checkout', '-d', LAMP, '--interval', '0.2', '--timeout', '60');
      const asked = await d.owner.answerNext(agent.agentId, 'stepup');
      assert.equal(asked.action, LAMP_ACTION, 'the owner approves the action the shop named');
      assert.deepEqual(asked.details, LAMP_DETAILS, 'with the summary the shop suggested, bound to the body the CLI sends');
      const bought = await buying;
      assert.equal(bought.code, 0, `${shop.mode}: ${show(bought)}\n${d.logs()}`);
      assert.equal(answer(bought).status, 201);
      const order = answer(bought).body['order'] as { id: string; product_id: string; agent_id: string };
      assert.deepEqual([order.product_id, order.agent_id], ['p1', agent.agentId]);

      const orders = await call(shop, '/orders');
      assert.deepEqual((answer(orders).body['orders'] as { id: string }[]).map((o) => o.id), [order.id], `${shop.mode}: the order exists`);
    }
  });

  it('step-up reuse refused: a step-up token collected for the lamp basket is refused for another basket, buys that basket once; sent again, to either shop, it is refused and nothing more is bought', async () => {
    const ordersAt = async (shop: Shop) => (answer(await call(shop, '/orders')).body['orders'] as unknown[]).length;
    const before = { cloud: await ordersAt(d.cloud), local: await ordersAt(d.local) };

    // Collected ahead with the SDK, bound to the lamp basket as `call` would bind it.
    const stepping = MandateAgent.fromDirectory(agent.dir).stepup(SITE, LAMP_ACTION, { details: LAMP_DETAILS, intervalMs: 200, timeoutMs: 60_000 });
    await d.owner.answerNext(agent.agentId, 'stepup');
    const token = await stepping;
    assert.ok(token.length > 0);

    const withToken = (shop: Shop, basket = LAMP) => call(shop, '/checkout', '-d', basket, '--no-stepup', '-H', `X-Service-Stepup: ${token}`);

    for (const shop of both()) {
      const otherBasket = await withToken(shop, '{"product_id":"p1","quantity":1,"coupon":"FREE"}');
      assert.deepEqual([answer(otherBasket).status, answer(otherBasket).body['error']], [403, 'stepup_wrong_details'], `${shop.mode}: ${show(otherBasket)}`);
    }

    const first = await withToken(d.cloud);
    assert.equal(first.code, 0, show(first));
    assert.equal(answer(first).status, 201);

    for (const shop of both()) {
      const replayed = await withToken(shop);
      assert.equal(replayed.code, 1, `${shop.mode}: ${show(replayed)}`);
      assert.deepEqual([answer(replayed).status, answer(replayed).body['error']], [401, 'stepup_used_or_expired'], `${shop.mode}: ${show(replayed)}`);
    }
    assert.deepEqual({ cloud: await ordersAt(d.cloud), local: await ordersAt(d.local) }, { cloud: before.cloud + 1, local: before.local });
  });

  it('key rotation with no failed request: an admin rotates while the CLI keeps calling both shops; new passes carry the new kid; the local shop takes the new key without a restart', async () => {
    // No waiting for the local shop: its start-up key fetch does not count toward the bound on
    // unknown-kid fetches, so the first pass with the new kid makes it fetch the new key set.
    const oldKid = kidOf(await d.pass(agent));
    const failures: string[] = [];
    let calls = 0;
    const round = async () => {
      for (const shop of both()) {
        const r = await call(shop, '/products');
        calls++;
        if (r.code !== 0 || answer(r).status !== 200) failures.push(`${shop.mode}: ${show(r)}`);
      }
    };

    await round();
    const [rotated] = await Promise.all([d.admin?.ok('POST', '/api/admin/keys/rotate'), round()]);
    const newKid = rotated?.['kid'];
    assert.ok(typeof newKid === 'string' && newKid !== oldKid, JSON.stringify(rotated));
    const published = ((await (await fetch(`${d.server.url}/api/v1/jwks`)).json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid);
    assert.ok(published.includes(newKid) && published.includes(String(oldKid)), `both keys are published: ${published.join(', ')}`);

    await round(); // the pass the CLI keeps was signed with the old key, still in its grace window
    const newPass = await d.pass(agent, { refresh: true });
    assert.equal(kidOf(newPass), newKid, 'a new pass is signed with the new key');
    await round();
    await round();
    assert.equal(agent.siteState(SITE).accessToken, newPass, 'the last rounds used the new pass');

    assert.deepEqual(failures, [], `${failures.length} of ${calls} calls failed\n${d.logs()}`);
    const health = await d.local.health();
    assert.equal(health.keys, 2, `the local shop holds both keys: ${JSON.stringify(health)}`);
  });
});
