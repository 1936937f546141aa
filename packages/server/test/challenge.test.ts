import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AccessRequiredError, AgentKey, MandateAgent } from '@mandate/agent';
import { HttpOwner } from './helpers/over-http.ts';
import { startServer, type ServerProcess } from './helpers/server-process.ts';

// The challenge (decisions §23), end to end: the real server as its own process, the real agent SDK,
// and an owner who approves with a passkey over HTTP. Verified as any site verifies (cloud mode).

describe('the challenge: an agent end to end against this instance', () => {
  let server: ServerProcess;
  let owner: HttpOwner;
  let agent: MandateAgent;
  let agentId = '';
  let site = '';
  let base = '';

  before(async () => {
    server = await startServer({ name: 'challenge server' });
    base = server.baseUrl;
    site = new URL(base).host; // localhost:<port>: the instance's site id
    owner = await HttpOwner.signUp(server, server.baseUrl, { label: 'challenge' });
    const key = await AgentKey.generate();
    agentId = await owner.createAgent('Challenger', key.publicJwk);
    // The agent calls the public address (localhost); Node connects to where the server listens.
    const toServer = (input: string | URL | Request, init?: RequestInit) => fetch(String(input instanceof Request ? input.url : input).replace(base, server.url), init);
    agent = new MandateAgent({ serviceUrl: base, agentId, privateKey: key, fetch: toServer });
  });
  after(async () => {
    await server?.stop();
  });

  it('without a pass: people get the page, JSON clients and agents a 401 saying what to send', async () => {
    const page = await fetch(`${server.url}/challenge`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /text\/html/);
    const body = await page.text();
    assert.ok(body.includes(`<code>${site}</code>`), 'the page names the site id');
    assert.match(body, /mandate-agent request --site localhost:\d+ --scopes challenge --wait/);

    const json = await fetch(`${server.url}/challenge`, { headers: { accept: 'application/json' } });
    assert.equal(json.status, 401);
    assert.equal((await json.json() as { error: string }).error, 'invalid_request');
    const forged = await fetch(`${server.url}/challenge`, { headers: { authorization: 'Bearer not.a.pass', dpop: 'not.a.proof' } });
    assert.equal(forged.status, 401);
    assert.equal((await forged.json() as { error: string }).error, 'invalid_token');
    const claim = await fetch(`${server.url}/challenge/claim`, { method: 'POST' });
    assert.equal(claim.status, 401);

    const txt = await fetch(`${server.url}/challenge/agents.txt`);
    assert.match(txt.headers.get('content-type') ?? '', /text\/plain/);
    const steps = await txt.text();
    assert.ok(steps.includes(`Site id: ${site}. Scope: challenge. Step-up action: claim.`));
    assert.ok(steps.includes(`mandate-agent call -X POST ${base}/challenge/claim`));
    assert.ok(steps.includes(`--package=${base}/download/agent`), 'the tool comes from this instance');
  });

  it('access refused until the owner approves; then read; claim is 403 stepup_required without a step-up and 200 with one', { timeout: 60_000 }, async () => {
    // No grant yet: the agent has no pass for the challenge.
    await assert.rejects(agent.fetch(`${base}/challenge`), (e: unknown) => e instanceof AccessRequiredError);

    // The agent asks; the owner approves the card with the passkey.
    const created = await agent.requestAccess({ site, scopes: ['challenge'] });
    const card = await owner.answerNext(agentId, 'initial');
    assert.equal(card.site, site);
    assert.deepEqual(card.scopes, ['challenge']);
    await agent.waitForApproval(created.txnId, { expiresAt: created.expiresAt, intervalMs: 200 });

    const read = await agent.fetch(`${base}/challenge`);
    assert.equal(read.status, 200);
    const readBody = await read.json() as { ok: boolean; site: string; agent_id: string; scopes: string[] };
    assert.deepEqual({ ok: readBody.ok, site: readBody.site, agent_id: readBody.agent_id, scopes: readBody.scopes }, { ok: true, site, agent_id: agentId, scopes: ['challenge'] });

    const refused = await agent.fetch(`${base}/challenge/claim`, { method: 'POST' }, { stepup: false });
    assert.equal(refused.status, 403);
    const description = 'this action needs a step-up approval by the owner, sent in X-Service-Stepup';
    assert.deepEqual(await refused.json(), { error: 'stepup_required', error_description: description, detail: description, action: 'claim' });
    assert.deepEqual(await owner.pending(), [], 'refusing asked nobody');

    // With the step-up: the SDK asks the owner for "claim", the owner approves, the SDK retries.
    const approving = owner.answerNext(agentId, 'stepup');
    const claimed = await agent.fetch(`${base}/challenge/claim`, { method: 'POST' }, { stepupWait: { intervalMs: 200 } });
    assert.equal((await approving).action, 'claim');
    assert.equal(claimed.status, 200);
    assert.deepEqual(await claimed.json(), { claimed: true, site, agent_id: agentId, agent_name: 'Challenger', message: 'Claimed: the owner approved "claim" with a passkey, and the step-up token is now used up.' });
  });

  it('a step-up token is used once; a pass without the scope is refused with insufficient_scope', { timeout: 60_000 }, async () => {
    const approving = owner.answerNext(agentId, 'stepup');
    const token = await agent.stepup(site, 'claim', { intervalMs: 200 });
    await approving;
    const withToken = () => agent.fetch(`${base}/challenge/claim`, { method: 'POST', headers: { 'x-service-stepup': token } }, { stepup: false });
    assert.equal((await withToken()).status, 200);
    const again = await withToken();
    assert.equal(again.status, 401, 'a used step-up token fails the request');

    // Another agent, approved for another scope only: its pass lacks `challenge`.
    const key = await AgentKey.generate();
    const otherId = await owner.createAgent('Other', key.publicJwk);
    const other = new MandateAgent({ serviceUrl: base, agentId: otherId, privateKey: key, fetch: (input, init) => fetch(String(input).replace(base, server.url), init) });
    const created = await other.requestAccess({ site, scopes: ['other'] });
    await owner.answerNext(otherId, 'initial');
    await other.waitForApproval(created.txnId, { expiresAt: created.expiresAt, intervalMs: 200 });
    const noScope = await other.fetch(`${base}/challenge`);
    assert.equal(noScope.status, 403);
    assert.equal((await noScope.json() as { error: string }).error, 'insufficient_scope');
  });
});
