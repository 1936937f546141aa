import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MandateAgent } from '@mandate/agent';
import { detailsDigestOf } from '@mandate/site';
import { until } from '../../packages/server/test/helpers/until.ts';
import { type AgentCli, show } from './helpers/cli.ts';
import { Deployment, SITE } from './helpers/deployment.ts';
import { Relay } from './helpers/relay.ts';
import type { Shop } from './helpers/shop.ts';
import { outcome, signedRequest } from './helpers/signed-request.ts';

// Mandate becomes unreachable for two shops that reach it through a relay the test cuts (the agent
// and the owner still reach it directly). Cloud mode has no verdict without Mandate and refuses at
// once; local mode goes on with the keys and revocation list it holds until that list is older than
// max_stale, then refuses too. Neither lets a request through unverified.

/** The local shop's max_stale: short, so the refusal comes quickly (the service re-signs its list every second), yet long enough for the checks made right after the cut, which start CLI processes, on a loaded machine (4 s was seen to run out). */
const MAX_STALE_SEC = 10;
const REV_TTL_SEC = 1;
const LAMP = { product_id: 'p1', quantity: 1 };

describe('Mandate unreachable', () => {
  let d: Deployment;
  let relay: Relay;
  let cloud: Shop;
  let local: Shop;
  let agent: AgentCli;
  let pass = '';

  before(async () => {
    d = await Deployment.start({ local: { revTtlSec: REV_TTL_SEC, maxStaleSec: MAX_STALE_SEC } });
    relay = await Relay.start({ host: '127.0.0.1', port: d.server.port });
    cloud = await d.startShop({ mode: 'cloud', mandateUrl: relay.url });
    local = await d.startShop({ mode: 'local', mandateUrl: relay.url, revTtlSec: REV_TTL_SEC, maxStaleSec: MAX_STALE_SEC });
    agent = await d.newAgent('Outage agent');
    await d.grantAccess(agent);
    pass = await d.pass(agent);
  });
  after(async () => {
    await relay?.close();
    await d?.stop();
  });

  const products = async (shop: Shop) => outcome(await signedRequest(agent, pass, `${shop.url}/products`));

  it('cut off: the cloud shop refuses at once (503 service_unavailable); the local shop serves from what it holds until max_stale, then refuses (503 revocation_stale)', { timeout: 180_000 }, async () => {
    assert.deepEqual([await products(cloud), await products(local)], ['200', '200'], d.logs());
    // A step-up collected before the cut: local mode must still confirm it with Mandate.
    // Bound to the checkout body, as the shop requires (an unbound one is refused without asking Mandate).
    const details = { summary: '1 × Desk lamp, 19.90 EUR, to Demo Shop', digest: detailsDigestOf(LAMP) };
    const stepping = MandateAgent.fromDirectory(agent.dir).stepup(SITE, 'buy 1 x Desk lamp for 19.90 EUR', { details, intervalMs: 200, timeoutMs: 60_000 });
    await d.owner.answerNext(agent.agentId, 'stepup');
    const stepupToken = await stepping;

    relay.cutOff();

    assert.equal(await products(local), '200', 'the local shop verifies on its own');
    assert.equal(await products(cloud), '503 service_unavailable');
    const checkout = await signedRequest(agent, pass, `${local.url}/checkout`, { method: 'POST', body: LAMP, headers: { 'x-service-stepup': stepupToken } });
    assert.equal(outcome(checkout), '503 service_unavailable', 'a step-up cannot be used up without Mandate');

    // What the agent meets: the site's 503, exit code 1.
    for (const [shop, expected] of [[cloud, 'service_unavailable'], [local, undefined]] as const) {
      const r = await agent.run('call', '--site', SITE, `${shop.url}/products`);
      const body = r.json?.['body'] as { error?: string } | undefined;
      if (expected === undefined) assert.deepEqual([r.code, r.json?.['status']], [0, 200], show(r));
      else assert.deepEqual([r.code, r.json?.['status'], body?.error], [1, 503, expected], show(r));
    }

    // The local shop serves while its list is at most max_stale old, and refuses from then on.
    let served = 0;
    const refusal = await until(
      'the local shop to refuse once its revocation list is older than max_stale',
      async () => {
        const answer = await products(local);
        if (answer === '200') served++;
        return answer === '200' ? undefined : answer;
      },
      { ms: (MAX_STALE_SEC + 15) * 1000, everyMs: 500, describe: () => d.logs() },
    );
    assert.equal(refusal, '503 revocation_stale');
    assert.ok(served > 0, 'it served while the list was fresh enough');
    const health = await local.health();
    assert.equal(health.ready, false);
    assert.ok((health.revocationAgeSec ?? 0) > MAX_STALE_SEC, JSON.stringify(health));
    assert.equal(await products(local), '503 revocation_stale', 'and goes on refusing');
    assert.equal(await products(cloud), '503 service_unavailable');
  });

  it('back: once Mandate is reachable again both shops serve without a restart', async () => {
    relay.restore();
    for (const shop of [cloud, local]) {
      // The local shop retries its poll within rev_ttl (at most 10 s after a failure).
      const answer = await until(`the ${shop.mode} shop to serve again`, async () => {
        const a = await products(shop);
        return a === '200' ? a : undefined;
      }, { ms: 20_000, everyMs: 200, describe: () => d.logs() });
      assert.equal(answer, '200');
    }
  });
});
