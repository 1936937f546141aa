import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HttpOwner } from '../../server/test/helpers/over-http.ts';
import { startServer, type ServerProcess } from '../../server/test/helpers/server-process.ts';
import { startShop, type Shop } from '../../../e2e/test/helpers/shop.ts';
import { agentDir, stdioSession, structured, text, type AgentDir, type McpSession } from './helpers/mcp-host.ts';
import { McpTestSite } from './helpers/mcp-site.ts';

// A whole session of a model using `mandate-agent mcp` over stdio, with the official SDK Client as
// the host, against a real service, the real demo shop and the owner answering with a passkey:
// access, calls, step-ups approved and denied, pending + mandate_wait, bad arguments, the limits,
// the agent revoked. At the end every tool result and the server's stderr are scanned for
// credentials: none may be there.

const SITE = 'shop.mcp.test';
const ALL_TOOLS = ['mandate_status', 'mandate_request_access', 'mandate_fetch', 'mandate_request_approval', 'mandate_notify_owner', 'mandate_plan_submit', 'mandate_plan_status', 'mandate_request_takeover', 'mandate_wait'];

describe('mandate-agent mcp: a model\'s session over stdio', { timeout: 300_000 }, () => {
  let server: ServerProcess;
  let owner: HttpOwner;
  let shop: Shop;
  let site: McpTestSite;
  let agent: AgentDir;
  let s: McpSession;
  /** The agent's pass and refresh token as its directory holds them while it has access. */
  const heldTokens: string[] = [];
  /** Started first and awaited last: a site that never finishes its answer is cut at the real 30 s. */
  let hanging: Promise<{ ms: number; result: Awaited<ReturnType<McpSession['call']>> }> | undefined;

  before(async () => {
    server = await startServer({ name: 'mcp flow server' });
    owner = await HttpOwner.signUp(server, server.baseUrl);
    [shop, site] = await Promise.all([startShop({ mode: 'cloud', mandateUrl: server.url, issuer: server.baseUrl, site: SITE }), McpTestSite.start()]);
    agent = await agentDir(server, owner, 'MCP bot');
    s = await stdioSession(agent.dir, ['--interval', '0.2']);
  });

  after(async () => {
    await s?.close();
    await Promise.all([site?.stop(), shop?.stop(), server?.stop()]);
    agent?.remove();
  });

  const fetchArgs = (path: string, extra: Record<string, unknown> = {}) => ({ url: `${shop.url}${path}`, site: SITE, ...extra });

  it('lists every tool of decisions §27 with a JSON Schema of its arguments', async () => {
    const { tools } = await s.client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ALL_TOOLS);
    for (const t of tools) {
      assert.equal(t.inputSchema.type, 'object', t.name);
      assert.ok(t.description && t.description.length > 20, t.name);
    }
    const fetch = tools.find((t) => t.name === 'mandate_fetch');
    assert.deepEqual(fetch?.inputSchema.required, ['url']);
  });

  it('asks the owner for access, reporting progress while the owner decides; the owner approves with a passkey', async () => {
    const progress: { progress: number; message?: string }[] = [];
    const asking = s.call('mandate_request_access', { site: SITE, scopes: ['list', 'orders:read', 'checkout'] }, { onprogress: (p) => progress.push(p) });
    const card = await owner.nextPending(agent.agentId, 'initial');
    assert.deepEqual(card.scopes, ['list', 'orders:read', 'checkout']);
    await new Promise((r) => setTimeout(r, 500)); // a moment in which the host hears the wait
    await owner.approve(card.id);
    const r = await asking;
    assert.equal(r.isError, undefined, text(r));
    assert.equal(structured(r)['status'], 'approved');
    assert.equal(structured(r)['site'], SITE);
    assert.deepEqual(structured(r)['scopes'], ['list', 'orders:read', 'checkout']);
    assert.ok(progress.length >= 1, 'a progress notification');
    assert.match(progress[0]?.message ?? '', /Waiting for the owner to approve access to shop\.mcp\.test/);

    const status = await s.call('mandate_status');
    assert.deepEqual(structured(status)['sites'].map((x: { site: string }) => x.site), [SITE]);
  });

  it('starts a call to a site that never finishes its answer (cut at 30 s, checked at the end)', () => {
    const started = Date.now();
    hanging = s.call('mandate_fetch', { url: `${site.url}/hang`, site: SITE }).then((result) => ({ ms: Date.now() - started, result }));
  });

  it('calls the shop with the pass', async () => {
    const r = await s.call('mandate_fetch', fetchArgs('/products'));
    assert.equal(r.isError, undefined, text(r));
    assert.equal(structured(r)['status'], 200);
    assert.match(structured(r)['content_type'], /json/);
    assert.equal(structured(r)['truncated'], false);
    assert.match(structured(r)['body'], /Desk lamp/);
    assert.match(text(r), /^HTTP 200/);
  });

  it('a step-up the owner approves: the site\'s own action text is asked for, and the call goes through once more', async () => {
    const buying = s.call('mandate_fetch', fetchArgs('/checkout', { method: 'POST', body: { product_id: 'p2', quantity: 2 }, action: 'a text the site does not check' }));
    const card = await owner.nextPending(agent.agentId, 'stepup');
    assert.equal(card.action, 'buy 2 x Notebook A5, dotted for 9.00 EUR');
    await owner.approve(card.id);
    const r = await buying;
    assert.equal(r.isError, undefined, text(r));
    assert.equal(structured(r)['status'], 201);
    assert.equal(JSON.parse(structured(r)['body']).order.quantity, 2);
  });

  it('a step-up the owner denies: a tool error with the detail and the next step', async () => {
    const buying = s.call('mandate_fetch', fetchArgs('/checkout', { method: 'POST', body: { product_id: 'p2', quantity: 1 } }));
    await owner.answerNext(agent.agentId, 'stepup', 'deny');
    const r = await buying;
    assert.equal(r.isError, true);
    assert.equal(structured(r)['error'], 'approval_denied');
    assert.match(structured(r)['detail'], /denied/);
    assert.ok(structured(r)['next_step']);
    assert.match(text(r), /Next step:/);
  });

  it('answers pending after wait_seconds; mandate_wait finishes the call once the owner approves', async () => {
    const r = await s.call('mandate_fetch', fetchArgs('/checkout', { method: 'POST', body: { product_id: 'p2', quantity: 1 }, wait_seconds: 0.5 }));
    assert.equal(r.isError, undefined, text(r));
    assert.equal(structured(r)['status'], 'pending');
    const txnId = structured(r)['txn_id'];
    assert.match(text(r), /mandate_wait/);
    const card = await owner.nextPending(agent.agentId, 'stepup');
    assert.equal(card.id, txnId);
    const waiting = s.call('mandate_wait', { txn_id: txnId });
    await owner.approve(card.id);
    const done = await waiting;
    assert.equal(done.isError, undefined, text(done));
    assert.equal(structured(done)['status'], 201);
    assert.equal(JSON.parse(structured(done)['body']).order.quantity, 1);
  });

  it('a site that names no action: the owner is asked for the `action` argument, or METHOD /path', async () => {
    for (const [extra, expected] of [[{ action: 'publish the weekly report' }, 'publish the weekly report'], [{}, 'POST /stepup']] as const) {
      const calling = s.call('mandate_fetch', { url: `${site.url}/stepup`, site: SITE, method: 'POST', body: 'go', ...extra });
      const card = await owner.nextPending(agent.agentId, 'stepup');
      assert.equal(card.action, expected);
      await owner.approve(card.id);
      const r = await calling;
      assert.equal(structured(r)['status'], 200, text(r));
    }
    assert.equal(site.stepupTokens.length, 2);
  });

  it('a site that echoes the request: no credential comes back', async () => {
    const r = await s.call('mandate_fetch', { url: `${site.url}/echo`, site: SITE, headers: { 'x-trace': 'abc' } });
    const echoed = JSON.parse(structured(r)['body']).headers;
    for (const f of readdirSync(join(agent.dir, 'state')).filter((n) => n.endsWith('.json'))) {
      const st = (JSON.parse(readFileSync(join(agent.dir, 'state', f), 'utf8')) as { state: { accessToken: string; refreshToken: string } }).state;
      heldTokens.push(st.accessToken, st.refreshToken);
    }
    assert.equal(echoed['x-trace'], 'abc');
    assert.equal(echoed['authorization'], 'Bearer [credential removed]');
    assert.equal(echoed['dpop'], '[credential removed]');
  });

  it('cuts a big answer at 64 kB with truncated', async () => {
    const r = await s.call('mandate_fetch', { url: `${site.url}/big`, site: SITE });
    assert.equal(structured(r)['truncated'], true);
    const body: string = structured(r)['body'];
    assert.ok(Buffer.byteLength(body) <= 64 * 1024 && Buffer.byteLength(body) > 60 * 1024);
    assert.match(body, /^é+$/, 'cut between characters');
    assert.ok(Buffer.byteLength(text(r)) <= 64 * 1024);
  });

  it('arguments of the wrong shape: a tool error naming the field; forbidden headers refused; the server keeps answering', async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['mandate_fetch', {}, 'url'],
      ['mandate_fetch', { url: 5 }, 'url'],
      ['mandate_fetch', { url: 'ftp://example.com/x' }, 'url'],
      ['mandate_fetch', { url: `${shop.url}/products`, urll: 'x' }, 'urll'],
      ['mandate_fetch', { url: `${shop.url}/products`, method: 'GET /x' }, 'method'],
      ['mandate_fetch', { url: `${shop.url}/products`, headers: ['a'] }, 'headers'],
      ['mandate_fetch', { url: `${shop.url}/products`, headers: { 'X-Ok': 5 } }, 'headers.X-Ok'],
      ['mandate_fetch', { url: `${shop.url}/products`, method: 'GET', body: 'x' }, 'body'],
      ['mandate_fetch', { url: `${shop.url}/products`, method: 'POST', body: 'x'.repeat(1024 * 1024 + 1) }, 'body'],
      ['mandate_fetch', { url: `${shop.url}/products`, wait_seconds: 1000 }, 'wait_seconds'],
      ['mandate_fetch', { url: `${shop.url}/products`, site: 'not a site!' }, 'site'],
      ['mandate_request_access', { site: SITE, scopes: [] }, 'scopes'],
      ['mandate_request_access', { site: SITE, scopes: 'list' }, 'scopes'],
      ['mandate_request_access', { site: null, scopes: ['list'] }, 'site'],
      ['mandate_request_approval', { site: SITE, action: 'Pay Now' }, 'action'],
      ['mandate_request_approval', { site: SITE, action: 'pay', details: { amount: 12 } }, 'details.amount'],
      ['mandate_notify_owner', { text: '' }, 'text'],
      ['mandate_plan_submit', { title: 'x', start_at: 1, end_at: 2, steps: [{ url: 'http://x', button: 'Go' }] }, 'steps.0.url'],
      ['mandate_plan_status', { plan_id: '../x' }, 'plan_id'],
      ['mandate_request_takeover', { url: 'https://example.com' }, 'reason'],
      ['mandate_wait', { txn_id: 'a/b' }, 'txn_id'],
      ['mandate_status', { extra: true }, 'extra'],
    ];
    for (const [tool, args, field] of cases) {
      const r = await s.call(tool, args);
      assert.equal(r.isError, true, `${tool} ${JSON.stringify(args).slice(0, 80)}`);
      assert.equal(structured(r)['error'], 'invalid_argument', `${tool} ${field}: ${text(r)}`);
      assert.equal(structured(r)['field'], field, `${tool}: ${text(r)}`);
    }
    for (const name of ['Authorization', 'dpop', 'Cookie', 'X-Service-Stepup', 'x-authyouragent-stepup', 'X-Service-Agent', 'Signature']) {
      const r = await s.call('mandate_fetch', { url: `${site.url}/echo`, site: SITE, headers: { [name]: 'mine' } });
      assert.equal(r.isError, true, name);
      assert.equal(structured(r)['field'], `headers.${name}`);
      assert.match(text(r), new RegExp(`the ${name} header may not be set`));
    }
    const unknown = await s.client.callTool({ name: 'no_such_tool', arguments: {} }).then(() => 'answered', (e: Error) => e.message);
    assert.match(unknown, /unknown tool/);
    const still = await s.call('mandate_status');
    assert.equal(still.isError, undefined);
  });

  it('the other tools: an approval, a note to the owner, a plan, a take-over', async () => {
    const approving = s.call('mandate_request_approval', { site: SITE, action: 'newsletter:send', details: { label: 'Send newsletter' } });
    await owner.answerNext(agent.agentId, 'agent_approval');
    const approval = await approving;
    assert.equal(structured(approval)['status'], 'approved', text(approval));

    const note = await s.call('mandate_notify_owner', { text: 'Bought the notebooks', kind: 'done' });
    assert.equal(structured(note)['status'], 'sent', text(note));

    const now = Math.floor(Date.now() / 1000);
    const planning = s.call('mandate_plan_submit', { title: 'Weekly order', start_at: now, end_at: now + 3600, steps: [{ url: `https://${SITE}/cart`, button: 'Add to cart' }] });
    await owner.answerNext(agent.agentId, 'plan');
    const plan = await planning;
    assert.equal(plan.isError, undefined, text(plan));
    assert.equal(structured(plan)['status'], 'approved');
    const planStatus = await s.call('mandate_plan_status', { plan_id: structured(plan)['plan_id'] });
    assert.equal(structured(planStatus)['steps'][0].approved, true);

    const takeover = await s.call('mandate_request_takeover', { url: `https://${SITE}/login`, reason: 'Log in, please' });
    assert.equal(takeover.isError, undefined, text(takeover));
    assert.match(structured(takeover)['owner_url'], /\/app\/takeover\/tk_/);
    assert.equal(Object.keys(structured(takeover)).includes('agent_token'), false);
  });

  it('the site that hung was cut after 30 s, and the server answered meanwhile', async () => {
    const { ms, result } = await hanging!;
    assert.equal(result.isError, true);
    assert.equal(structured(result)['error'], 'site_timeout');
    assert.ok(ms >= 29_000 && ms < 45_000, `${ms} ms`);
  });

  it('the owner revokes the agent: tool errors with the service\'s detail and next step', async () => {
    await owner.flag(agent.agentId, 'revoked');
    for (const [tool, args] of [['mandate_fetch', fetchArgs('/products')], ['mandate_status', {}]] as const) {
      const r = await s.call(tool, args);
      assert.equal(r.isError, true, tool);
      assert.equal(structured(r)['error'], 'agent_revoked', `${tool}: ${text(r)}`);
      assert.match(structured(r)['detail'], /revoked/);
      assert.ok(structured(r)['next_step'], `${tool}: ${text(r)}`);
    }
  });

  it('no tool result and no log line holds a credential', () => {
    const key = JSON.parse(readFileSync(join(agent.dir, 'key.json'), 'utf8')) as { private_jwk: { d: string } };
    const secrets = [key.private_jwk.d, ...heldTokens, ...site.stepupTokens];
    assert.equal(secrets.length, 5);
    assert.ok(secrets.every((x) => typeof x === 'string' && x.length > 20));
    const everything = [...s.results.map((r) => JSON.stringify(r)), s.log()];
    assert.ok(s.results.length > 40, `${s.results.length} results`);
    for (const chunk of everything) {
      assert.doesNotMatch(chunk, /eyJ[\w-]+\.[\w-]+/, 'a JWT');
      for (const secret of secrets) assert.ok(!chunk.includes(secret), 'a secret of the agent');
    }
  });
});
