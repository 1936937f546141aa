import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { detailsDigestOf } from '@mandate/protocol';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Child } from '../../server/test/helpers/child-process.ts';
import { HttpOwner } from '../../server/test/helpers/over-http.ts';
import { freePort, startServer, type ServerProcess } from '../../server/test/helpers/server-process.ts';
import { startShop, type Shop } from '../../../e2e/test/helpers/shop.ts';
import { agentDir, httpServer, httpSession, structured, text, type AgentDir, type McpSession } from './helpers/mcp-host.ts';

// The demo shop's own tools (`--openapi <shop>/openapi.json`), used by the official SDK Client over
// streamable HTTP against a real service: the first call of a tool asks the owner for its scopes and
// waits (with progress notifications), then calls the shop; a purchase asks for the step-up the shop
// names. Every result and the server's output are scanned for credentials at the end.

const SITE = 'shop.openapi.test';

describe('mandate-agent mcp --http --openapi: the demo shop\'s tools', { timeout: 240_000 }, () => {
  let server: ServerProcess;
  let owner: HttpOwner;
  let shop: Shop;
  let agent: AgentDir;
  let mcp: Child;
  let s: McpSession;

  before(async () => {
    server = await startServer({ name: 'mcp openapi server' });
    owner = await HttpOwner.signUp(server, server.baseUrl);
    shop = await startShop({ mode: 'cloud', mandateUrl: server.url, issuer: server.baseUrl, site: SITE });
    agent = await agentDir(server, owner, 'Shop tools bot');
    const token = randomBytes(32).toString('base64url');
    const port = await freePort();
    mcp = await httpServer(agent.dir, port, token, ['--openapi', `${shop.url}/openapi.json`, '--site', SITE, '--interval', '0.2']);
    s = await httpSession(`http://127.0.0.1:${port}/mcp`, token, () => mcp.output());
  });

  after(async () => {
    await s?.close();
    await mcp?.stop();
    await Promise.all([shop?.stop(), server?.stop()]);
    agent?.remove();
  });

  it('lists the shop\'s operations after the tools of Mandate', async () => {
    const { tools } = await s.client.listTools();
    assert.deepEqual(tools.map((t) => t.name).slice(-3), ['list_products', 'list_orders', 'checkout']);
    assert.equal(tools.length, 12);
  });

  it('the first call of a tool asks the owner for its scopes, reporting progress; a purchase then asks for the step-up the shop names', async () => {
    const progress: { progress: number; message?: string }[] = [];
    const buying = s.call('checkout', { product_id: 'p1', quantity: 1 }, { onprogress: (p) => progress.push(p) });
    const access = await Promise.race([owner.nextPending(agent.agentId, 'initial'), buying.then((r) => assert.fail(`answered before the owner: ${text(r)}`))]);
    assert.deepEqual(access.scopes, ['checkout']);
    await new Promise((r) => setTimeout(r, 300));
    await owner.approve(access.id);
    const stepup = await owner.nextPending(agent.agentId, 'stepup');
    assert.equal(stepup.action, 'buy 1 x Desk lamp for 19.90 EUR');
    assert.deepEqual(stepup.details, { summary: '1 × Desk lamp, 19.90 EUR, to Demo Shop', digest: detailsDigestOf({ product_id: 'p1', quantity: 1 }) }, 'the step-up is bound to the body the tool sends');
    await owner.approve(stepup.id);
    const r = await buying;
    assert.equal(r.isError, undefined, text(r));
    assert.equal(structured(r)['status'], 201);
    assert.equal(JSON.parse(structured(r)['body']).order.product_id, 'p1');
    assert.ok(progress.length >= 1, 'progress while the owner decides (at most one per 5 s)');
    assert.match(progress[0]?.message ?? '', /access to shop\.openapi\.test \(checkout\) for checkout/);
  });

  it('mandate_fetch of a checkout binds its step-up to the JSON body: the owner reads the shop\'s summary, the shop takes the approval for that basket', async () => {
    const basket = { quantity: 2, product_id: 'p1' };
    const buying = s.call('mandate_fetch', { url: `${shop.url}/checkout`, site: SITE, body: basket });
    const stepup = await owner.nextPending(agent.agentId, 'stepup');
    assert.equal(stepup.action, 'buy 2 x Desk lamp for 39.80 EUR');
    assert.deepEqual(stepup.details, { summary: '2 × Desk lamp, 39.80 EUR, to Demo Shop', digest: detailsDigestOf(basket) });
    await owner.approve(stepup.id);
    const r = await buying;
    assert.equal(r.isError, undefined, text(r));
    assert.equal(structured(r)['status'], 201, text(r));
    assert.equal(JSON.parse(structured(r)['body']).order.quantity, 2);
  });

  it('with access held, a tool goes straight to the shop, whose refusal for a scope not granted is a tool error naming the scopes', async () => {
    const r = await s.call('list_products');
    assert.equal(r.isError, true, text(r));
    assert.equal(structured(r)['error'], 'insufficient_scope');
    assert.deepEqual(structured(r)['scopes_granted'], ['checkout']);
    assert.deepEqual(structured(r)['scopes_needed'], ['list']);
    assert.match(structured(r)['next_step'], /mandate_request_access with \{"site":"shop\.openapi\.test","scopes":\["checkout","list"\]\}/);
    assert.equal((await owner.pending()).length, 0, 'no second access request');
  });

  it('arguments that do not fit the operation: a tool error naming the field', async () => {
    for (const [args, field] of [[{ quantity: 1 }, 'product_id'], [{ product_id: 'p1', quantity: 11 }, 'quantity']] as const) {
      const r = await s.call('checkout', args);
      assert.equal(r.isError, true);
      assert.equal(structured(r)['error'], 'invalid_argument');
      assert.equal(structured(r)['field'], field);
    }
  });

  it('no tool result and no log line holds a credential', () => {
    const key = JSON.parse(readFileSync(join(agent.dir, 'key.json'), 'utf8')) as { private_jwk: { d: string } };
    const state = (JSON.parse(readFileSync(join(agent.dir, 'state', `${SITE}.json`), 'utf8')) as { state: { accessToken: string; refreshToken: string } }).state;
    for (const chunk of [...s.results.map((r) => JSON.stringify(r)), mcp.output()]) {
      assert.doesNotMatch(chunk, /eyJ[\w-]+\.[\w-]+/);
      for (const secret of [key.private_jwk.d, state.accessToken, state.refreshToken]) assert.ok(!chunk.includes(secret));
    }
  });
});
