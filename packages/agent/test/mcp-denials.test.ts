import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { HttpOwner } from '../../server/test/helpers/over-http.ts';
import { startServer, type ServerProcess } from '../../server/test/helpers/server-process.ts';
import { startShop, type Shop } from '../../../e2e/test/helpers/shop.ts';
import { agentDir, stdioSession, structured, text, type AgentDir, type McpSession } from './helpers/mcp-host.ts';

// What the model reads when the owner says no, and when the agent's access lacks a scope, with
// `mandate-agent mcp --openapi <the demo shop>` over stdio, the official SDK Client as the host, a
// real service and the owner answering with a passkey (or denying):
// - an access request, a site tool's first call, an agent approval and a plan the owner denies:
//   tool errors carrying the service's detail and a next step;
// - a second access request while one waits: an error pointing at mandate_wait of the first;
// - access held without a scope a tool needs (the shop's 403 insufficient_scope, the service's 409
//   on a second access request): an error naming the scopes granted and needed, whose next step,
//   followed (the owner revokes, the agent asks again), gets the call through.

const SITE = 'shop.denials.test';

function assertDenied(r: CallToolResult, txnId: string): void {
  assert.equal(r.isError, true, text(r));
  assert.equal(structured(r)['error'], 'approval_denied');
  assert.equal(structured(r)['txn_id'], txnId);
  assert.match(structured(r)['detail'], /the owner denied the request/);
  assert.match(structured(r)['next_step'], /do not retry the same request at once/);
  assert.match(text(r), /^Error \(approval_denied\): .*\nNext step: /);
}

describe('mandate-agent mcp: denials and missing scopes', { timeout: 180_000 }, () => {
  let server: ServerProcess;
  let owner: HttpOwner;
  let shop: Shop;
  let agent: AgentDir;
  let s: McpSession;

  before(async () => {
    server = await startServer({ name: 'mcp denials server' });
    owner = await HttpOwner.signUp(server, server.baseUrl);
    shop = await startShop({ mode: 'cloud', mandateUrl: server.url, issuer: server.baseUrl, site: SITE });
    agent = await agentDir(server, owner, 'Denied bot');
    s = await stdioSession(agent.dir, ['--openapi', `${shop.url}/openapi.json`, '--site', SITE, '--interval', '0.2']);
  });

  after(async () => {
    await s?.close();
    await Promise.all([shop?.stop(), server?.stop()]);
    agent?.remove();
  });

  const noCardOpen = async () => assert.deepEqual(await owner.pending(), [], 'no request waits for the owner');

  it('mandate_request_access the owner denies', async () => {
    const asking = s.call('mandate_request_access', { site: SITE, scopes: ['list'] });
    const card = await owner.answerNext(agent.agentId, 'initial', 'deny');
    assertDenied(await asking, card.id);
  });

  it('a site tool\'s first call, whose access request the owner denies: the shop is not called', async () => {
    const listing = s.call('list_products');
    const card = await owner.answerNext(agent.agentId, 'initial', 'deny');
    assert.deepEqual(card.scopes, ['list']);
    assertDenied(await listing, card.id);
    const status = await s.call('mandate_status');
    assert.deepEqual(structured(status)['sites'], [], 'no pass was ever issued');
  });

  it('mandate_request_approval the owner denies', async () => {
    const approving = s.call('mandate_request_approval', { site: SITE, action: 'newsletter:send', details: { label: 'Send newsletter' } });
    const card = await owner.answerNext(agent.agentId, 'agent_approval', 'deny');
    assertDenied(await approving, card.id);
  });

  it('mandate_plan_submit the owner denies', async () => {
    const now = Math.floor(Date.now() / 1000);
    const planning = s.call('mandate_plan_submit', { title: 'Weekly order', start_at: now, end_at: now + 3600, steps: [{ url: `https://${SITE}/cart`, button: 'Add to cart' }] });
    const card = await owner.answerNext(agent.agentId, 'plan', 'deny');
    assertDenied(await planning, card.id);
  });

  it('a second access request while the first waits: an error pointing at mandate_wait of the first', async () => {
    const first = await s.call('mandate_request_access', { site: SITE, scopes: ['list'], wait_seconds: 0.5 });
    assert.equal(structured(first)['status'], 'pending', text(first));
    const txnId = structured(first)['txn_id'];
    for (const [tool, args] of [['mandate_request_access', { site: SITE, scopes: ['list', 'checkout'] }], ['checkout', { product_id: 'p1' }]] as const) {
      const again = await s.call(tool, args);
      assert.equal(again.isError, true, text(again));
      assert.equal(structured(again)['error'], 'request_already_waiting', tool);
      assert.equal(structured(again)['txn_id'], txnId, tool);
      assert.equal(structured(again)['next_step'], `call mandate_wait with {"txn_id": "${txnId}"} for its answer`);
    }
    const waiting = s.call('mandate_wait', { txn_id: txnId });
    const card = await owner.nextPending(agent.agentId, 'initial');
    assert.equal(card.id, txnId);
    await owner.approve(card.id);
    const granted = await waiting;
    assert.equal(structured(granted)['status'], 'approved', text(granted));
    assert.deepEqual(structured(granted)['scopes'], ['list']);
  });

  it('access held without a tool\'s scope: the shop\'s 403 insufficient_scope is a tool error naming the scopes, and no step-up is asked for', async () => {
    const r = await s.call('checkout', { product_id: 'p1', quantity: 1 });
    assert.equal(r.isError, true, text(r));
    assert.deepEqual(structured(r), {
      error: 'insufficient_scope',
      detail: `${SITE} refused POST ${shop.url}/checkout for want of a scope (the site said: "this route needs the scope checkout"): the agent's access to ${SITE} has the scopes "list"; this needs the scope "checkout"`,
      next_step: `while this access lives the service files no second access request for ${SITE}: ask the owner (mandate_notify_owner can) to revoke this agent's access to ${SITE} in the Mandate app (Access, "Revoke access"), then call mandate_request_access with {"site":"${SITE}","scopes":["list","checkout"]}`,
      site: SITE,
      scopes_granted: ['list'],
      scopes_needed: ['checkout'],
    });
    await noCardOpen();
  });

  it('mandate_fetch of the same route: the same error, with the scopes granted and the site\'s words', async () => {
    const r = await s.call('mandate_fetch', { url: `${shop.url}/checkout`, site: SITE, body: { product_id: 'p1', quantity: 1 } });
    assert.equal(r.isError, true, text(r));
    assert.equal(structured(r)['error'], 'insufficient_scope');
    assert.deepEqual(structured(r)['scopes_granted'], ['list']);
    assert.match(structured(r)['detail'], /this route needs the scope checkout/);
    assert.match(structured(r)['next_step'], /revoke this agent's access .* then call mandate_request_access/);
    await noCardOpen();
  });

  it('mandate_request_access of scopes already granted answers approved at once; of more scopes, an error naming them (the service\'s 409)', async () => {
    const held = await s.call('mandate_request_access', { site: SITE, scopes: ['list'] });
    assert.equal(held.isError, undefined, text(held));
    assert.equal(structured(held)['status'], 'approved');
    assert.deepEqual(structured(held)['scopes'], ['list']);
    assert.match(text(held), /already granted/);

    const more = await s.call('mandate_request_access', { site: SITE, scopes: ['list', 'checkout'] });
    assert.equal(more.isError, true, text(more));
    assert.equal(structured(more)['error'], 'access_already_granted');
    assert.deepEqual(structured(more)['scopes_granted'], ['list']);
    assert.deepEqual(structured(more)['scopes_needed'], ['checkout']);
    assert.match(structured(more)['detail'], /already granted this agent access to shop\.denials\.test: .*has the scopes "list"; this needs the scope "checkout"/);
    assert.match(structured(more)['next_step'], /"Revoke access"\), then call mandate_request_access with \{"site":"shop\.denials\.test","scopes":\["list","checkout"\]\}/);
    await noCardOpen();
  });

  it('the next step, followed: the owner revokes the access, the agent asks again with both scopes, and the purchase goes through', async () => {
    const [grant] = await owner.grants();
    assert.equal(grant?.site, SITE);
    await owner.ok('POST', `/api/grants/${grant!.id}/revoke`);

    const asking = s.call('mandate_request_access', { site: SITE, scopes: ['list', 'checkout'] });
    await owner.answerNext(agent.agentId, 'initial');
    const granted = await asking;
    assert.equal(granted.isError, undefined, text(granted));
    assert.deepEqual(structured(granted)['scopes'], ['list', 'checkout']);

    const buying = s.call('checkout', { product_id: 'p1', quantity: 1 });
    const stepup = await owner.answerNext(agent.agentId, 'stepup');
    assert.equal(stepup.action, 'buy 1 x Desk lamp for 19.90 EUR');
    const bought = await buying;
    assert.equal(bought.isError, undefined, text(bought));
    assert.equal(structured(bought)['status'], 201);
  });

  it('no tool result and no log line holds a credential', () => {
    const key = JSON.parse(readFileSync(join(agent.dir, 'key.json'), 'utf8')) as { private_jwk: { d: string } };
    const state = (JSON.parse(readFileSync(join(agent.dir, 'state', `${SITE}.json`), 'utf8')) as { state: { accessToken: string; refreshToken: string } }).state;
    assert.ok(s.results.length >= 15, `${s.results.length} results`);
    for (const chunk of [...s.results.map((r) => JSON.stringify(r)), s.log()]) {
      assert.doesNotMatch(chunk, /eyJ[\w-]+\.[\w-]+/, 'a JWT');
      for (const secret of [key.private_jwk.d, state.accessToken, state.refreshToken]) assert.ok(!chunk.includes(secret), 'a secret of the agent');
    }
  });
});
