import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HttpOwner } from '../../server/test/helpers/over-http.ts';
import { startServer, type ServerProcess } from '../../server/test/helpers/server-process.ts';
import { MandateAgent } from '../src/agent.ts';
import type { WaitProgress } from '../src/approvals/wait.ts';
import { AccessRequiredError, AgentRevokedError, ApprovalError, MandateError } from '../src/client/errors.ts';
import type { Clock } from '../src/clock.ts';
import { systemClock } from '../src/clock.ts';
import { AgentKey } from '../src/keys/agent-key.ts';
import { saveKeyFile } from '../src/keys/key-file.ts';
import { writePrivateFileAtomic } from '../src/keys/secure-fs.ts';
import { TestSite } from './helpers/test-site.ts';

// The SDK against a real Mandate server process and a small site verifying with it; the owner's
// part (sign-up, passkey, approvals) is played over HTTP.

const FAST = { intervalMs: 200 };

describe('agent SDK against a real service', { timeout: 180_000 }, () => {
  let server: ServerProcess;
  let owner: HttpOwner;
  let site: TestSite;
  let root = '';
  let n = 0;

  /** A registered agent with its own directory, as `mandate-agent init` + `set-id` leave it. */
  async function newAgent(name: string): Promise<{ dir: string; agentId: string; agent: MandateAgent }> {
    const dir = join(root, `agent${n++}`);
    const key = await AgentKey.generate();
    const agentId = await owner.createAgent(name, key.publicJwk);
    saveKeyFile(dir, { serviceUrl: server.url, agentId, name, key, createdAt: new Date().toISOString() });
    return { dir, agentId, agent: MandateAgent.fromDirectory(dir) };
  }

  const storedRefreshToken = (dir: string, siteId: string): string =>
    (JSON.parse(readFileSync(join(dir, 'state', `${siteId}.json`), 'utf8')) as { state: { refreshToken: string } }).state.refreshToken;

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'mandate-agent-sdk-'));
    server = await startServer({ name: 'sdk test server' });
    owner = await HttpOwner.signUp(server, server.baseUrl);
    site = await TestSite.start(server.url);
  });

  after(async () => {
    await site?.stop();
    await server?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  describe('one agent, start to finish', () => {
    let dir = '';
    let agentId = '';
    let agent: MandateAgent;
    before(async () => ({ dir, agentId, agent } = await newAgent('Shopping bot')));

    it('asks for access, sees the owner approve, gets its first pass and calls the site', async () => {
      const created = await agent.requestAccess({ site: site.siteId, scopes: ['list', 'pay', 'list'] });
      assert.match(created.txnId, /^t_/);
      assert.equal(created.expiresIn, 300);
      const progress: WaitProgress[] = [];
      const [answer, asked] = await Promise.all([
        agent.waitForApproval(created.txnId, { ...FAST, expiresAt: created.expiresAt, onProgress: (p) => progress.push(p) }),
        owner.answerNext(agentId, 'initial'),
      ]);
      assert.deepEqual(asked.scopes, ['list', 'pay'], 'duplicates collapsed');
      assert.equal(answer.status, 'approved');
      assert.deepEqual(answer.scopes, ['list', 'pay']);
      assert.equal(progress.at(-1)?.status, 'approved');
      assert.ok(progress.every((p) => p.remainingMs <= 300_000));

      const pass = await agent.pass(site.siteId);
      assert.equal(pass.fetched, true);
      assert.deepEqual(pass.scope, ['list', 'pay']);

      site.seen.length = 0;
      for (let i = 0; i < 2; i++) {
        const res = await agent.fetch(`${site.url}/items`);
        assert.equal(res.status, 200);
        assert.deepEqual(await res.json(), { items: ['a', 'b'], agent: 'Shopping bot' });
      }
      assert.equal(site.seen.length, 2);
      assert.ok(site.seen.every((s) => s.authorization === `Bearer ${pass.accessToken}`), 'the pass goes as a Bearer token');
      assert.notEqual(site.seen[0]?.dpop, site.seen[1]?.dpop, 'a fresh DPoP proof per request');
      assert.equal((await agent.pass(site.siteId)).fetched, false, 'the fresh pass is reused');
    });

    it('refuses a second request while access is approved, with the service\'s words', async () => {
      await assert.rejects(agent.requestAccess({ site: site.siteId, scopes: ['list'] }), (e: unknown) => e instanceof MandateError && e.status === 409 && e.detail === 'access already approved' && /POST \/api\/v1\/token/.test(e.nextStep ?? ''));
    });

    it('rotates the refresh token, keeps it on disk, and a new SDK instance goes on from there', async () => {
      const before = storedRefreshToken(dir, site.siteId);
      // A restarted agent whose clock says the pass is about to expire (590 s later).
      const later: Clock = { now: () => Date.now() + 590_000, sleep: systemClock.sleep };
      const restarted = MandateAgent.fromDirectory(dir, { clock: later });
      const renewed = await restarted.pass(site.siteId);
      assert.equal(renewed.fetched, true);
      const after = storedRefreshToken(dir, site.siteId);
      assert.notEqual(after, before, 'the rotated refresh token is stored');
      assert.equal((await restarted.fetch(`${site.url}/items`)).status, 200);

      // The refresh token used up by the renewal is refused by the service.
      const reuse = await fetch(`${server.url}/api/v1/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ agent_id: agentId, site: site.siteId, agent_jwt: await agent.agentJwt(), refresh_token: before }),
      });
      assert.equal(reuse.status, 401);

      // Yet another instance reads the renewed pass from disk instead of spending a new one.
      const third = MandateAgent.fromDirectory(dir, { clock: later });
      assert.equal((await third.pass(site.siteId)).accessToken, renewed.accessToken);
      assert.equal(storedRefreshToken(dir, site.siteId), after);
    });

    it('renews the pass and retries once when the site says token_expired', async () => {
      site.seen.length = 0;
      const res = await agent.fetch(`${site.url}/flaky`);
      assert.equal(res.status, 200);
      assert.deepEqual(site.seen.map((s) => s.status), [401, 200]);
      assert.notEqual(site.seen[0]?.authorization, site.seen[1]?.authorization, 'the retry carries a renewed pass');
    });

    it('asks for a step-up when the site wants one, waits for the owner and retries once with it', async () => {
      site.seen.length = 0;
      const progress: string[] = [];
      const [res, asked] = await Promise.all([
        agent.fetch(`${site.url}/orders/42/pay`, { method: 'POST', body: '{"amount":"19.90"}', headers: { 'content-type': 'application/json' } }, { stepupWait: { ...FAST, onProgress: (p) => progress.push(p.status) } }),
        owner.answerNext(agentId, 'stepup'),
      ]);
      assert.equal(asked.action, 'pay order 42', 'the action the site named');
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { order: '42', done: 'pay' });
      assert.deepEqual(site.seen.map((s) => [s.status, s.stepup !== undefined]), [[403, false], [200, true]]);
      assert.equal(progress.at(-1), 'approved');
    });

    it('uses the caller\'s action when the site names none, and reports a denied step-up without retrying', async () => {
      site.seen.length = 0;
      const [outcome, asked] = await Promise.all([
        agent.fetch(`${site.url}/orders/7/cancel`, { method: 'POST' }, { stepupAction: 'cancel order 7', stepupWait: FAST }).then(() => undefined, (e: unknown) => e),
        owner.answerNext(agentId, 'stepup', 'deny'),
      ]);
      assert.equal(asked.action, 'cancel order 7');
      assert.ok(outcome instanceof ApprovalError && outcome.outcome === 'denied', String(outcome));
      assert.equal(site.seen.length, 1, 'no second try after a denial');

      // With no action given and none named, the 403 comes back as it is.
      const plain = await agent.fetch(`${site.url}/orders/7/cancel`, { method: 'POST' });
      assert.equal(plain.status, 403);
      assert.deepEqual(await plain.json(), { error: 'stepup_required' });
    });

    it('sends a note to the owner and reports its status', async () => {
      assert.deepEqual(await agent.notify({ text: 'order 42 paid', title: 'Done', kind: 'done' }), { inbox: true, devices: 0 }, 'kept in the inbox; no device set up');
      await agent.reportStatus({ status: 'comparing prices', site: site.siteId });
      const activity = await owner.ok<{ items: unknown[] }>('GET', `/api/activity?agent=${agentId}&action=agent.note`);
      assert.equal(activity.items.length, 1);
      const statuses = await owner.ok<{ site: string; status: string }[]>('GET', `/api/agents/${agentId}/statuses`);
      assert.deepEqual(statuses.map((s) => [s.site, s.status]), [[site.siteId, 'comparing prices']]);
      await assert.rejects(agent.notify({ text: 'x', kind: 'Not Valid' }), (e: unknown) => e instanceof MandateError && e.status === 422 && /kind/.test(e.detail));
    });

    it('checks its own status', async () => {
      const status = await agent.status();
      assert.equal(status.agent_id, agentId);
      assert.equal(status.global_flag, 'ok');
      assert.deepEqual(status.revoked_sites, []);
    });
  });

  it('says access must be requested when there is none, and reports a denied request', async () => {
    const { agentId, agent } = await newAgent('Newcomer');
    await assert.rejects(agent.pass(site.siteId), (e: unknown) => e instanceof AccessRequiredError && e.status === 403 && e.detail === 'no approved access for this site' && e.site === site.siteId);
    const created = await agent.requestAccess({ site: site.siteId, scopes: ['list'] });
    await assert.rejects(agent.requestAccess({ site: site.siteId, scopes: ['list'] }), (e: unknown) => e instanceof MandateError && e.status === 409);
    const [outcome] = await Promise.all([
      agent.waitForApproval(created.txnId, FAST).then(() => undefined, (e: unknown) => e),
      owner.answerNext(agentId, 'initial', 'deny'),
    ]);
    assert.ok(outcome instanceof ApprovalError && outcome.outcome === 'denied', String(outcome));
  });

  it('after the owner revoked the site\'s access: AccessRequiredError; after a new approval it goes on', async () => {
    const { dir, agentId, agent } = await newAgent('Grant revoked');
    const first = await agent.requestAccess({ site: site.siteId, scopes: ['list'] });
    await Promise.all([agent.waitForApproval(first.txnId, FAST), owner.answerNext(agentId, 'initial')]);
    assert.equal((await agent.fetch(`${site.url}/items`)).status, 200);
    const stateFile = join(dir, 'state', `${site.siteId}.json`);
    const oldState = readFileSync(stateFile, 'utf8');

    const grants = await owner.ok<{ id: string; agent_id: string }[]>('GET', '/api/grants');
    const grant = grants.find((g) => g.agent_id === agentId);
    assert.ok(grant);
    await owner.ok('POST', `/api/grants/${grant.id}/revoke`);
    await assert.rejects(agent.fetch(`${site.url}/items`), (e: unknown) => e instanceof AccessRequiredError && e.status === 403 && e.detail === 'no approved access for this site' && /authz-requests/.test(e.nextStep ?? ''));

    // Approved again. An instance that never saw any of it still holds the old grant's pass and
    // refresh token (written back here): the site refuses the pass (grant_revoked), the old refresh
    // token is void, and within the hour of the new approval a pass comes without one.
    const again = await agent.requestAccess({ site: site.siteId, scopes: ['list'] });
    await Promise.all([agent.waitForApproval(again.txnId, FAST), owner.answerNext(agentId, 'initial')]);
    writePrivateFileAtomic(stateFile, oldState);
    site.seen.length = 0;
    const res = await MandateAgent.fromDirectory(dir).fetch(`${site.url}/items`);
    assert.equal(res.status, 200, 'a pass of the new grant, fetched without the void refresh token');
    assert.deepEqual(site.seen.map((s) => s.status), [401, 200]);
    assert.notEqual(readFileSync(stateFile, 'utf8'), oldState);
  });

  it('gives a clear error everywhere once the owner revoked the agent', async () => {
    const { agentId, agent } = await newAgent('Soon revoked');
    const created = await agent.requestAccess({ site: site.siteId, scopes: ['list'] });
    await Promise.all([agent.waitForApproval(created.txnId, FAST), owner.answerNext(agentId, 'initial')]);
    await agent.pass(site.siteId);
    await owner.flag(agentId, 'revoked');

    const revoked = (e: unknown) => e instanceof AgentRevokedError && e.code === 'agent_revoked' && e.status === 403 && e.detail === 'agent revoked by its owner' && !!e.nextStep;
    await assert.rejects(agent.status(), revoked);
    await assert.rejects(agent.pass(site.siteId, { force: true }), revoked);
    await assert.rejects(agent.requestAccess({ site: 'other.example', scopes: ['list'] }), revoked);
    await assert.rejects(agent.notify({ text: 'hello' }), revoked);
    // The site refuses the pass it still holds (401 agent_revoked); renewing it, the service confirms
    // why, and the error names what the site answered.
    await assert.rejects(agent.fetch(`${site.url}/items`), (e: unknown) => revoked(e) && e instanceof AgentRevokedError && e.siteAnswer === 'agent_revoked');
  });

  it('submits a plan, which the owner approves in part; the agent reads each step (decisions §20)', async () => {
    const { agent } = await newAgent('Nightly bot');
    const now = Math.floor(Date.now() / 1000);
    const created = await agent.submitPlan({
      title: 'Nightly tidy', start_at: now + 60, end_at: now + 3600,
      steps: [{ url: 'https://shop.example/list', button: 'Save' }, { id: 'pay', url: 'https://shop.example/pay', button: 'Pay now', path: '/pay' }],
    });
    assert.equal(created.status, 'pending');
    assert.equal((await agent.planStatus(created.plan_id)).status, 'pending');
    await owner.approve(created.txn_id, { steps: ['1', 'pay'] });
    const view = await agent.planStatus(created.plan_id);
    assert.equal(view.status, 'approved');
    assert.deepEqual(view.steps.map((s) => [s.id, s.approved, s.pre_approvable, s.uses_left]), [['1', true, true, 1], ['pay', false, false, 0]]);
    await assert.rejects(agent.planResult('t_aaaaaaaaaaaaaaaaaaaaaaaaaa', 'done'), (e: unknown) => e instanceof MandateError);
    await assert.rejects(agent.submitPlan({ title: 'x', start_at: now, end_at: now + 10, steps: [{ url: 'https://a.example/', button: 'Save' }] }), (e: unknown) => e instanceof MandateError && /60 s to 24 h/.test(e.message));
  });
});
