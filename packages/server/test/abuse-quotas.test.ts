import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { QUOTAS } from '../src/domain/quotas.ts';
import { STATUS_SITES_KEPT } from '../src/domain/agents/agent-status.ts';
import { newPendingRequest } from '../src/domain/approvals/request-rules.ts';
import { createAgent, createGrant, type TestAgent } from './helpers/agents.ts';
import { expectStatus, json, remoteAddress, signUp, type TestApp, testApp } from './helpers/app.ts';
import { accessRequest, approve, ownerWithPasskey, postAccessRequest, respond } from './helpers/approvals.ts';
import { HttpOwner, call, remoteAccessRequest, remoteAgent, type Reply } from './helpers/over-http.ts';
import { freshPostgresDatabase } from './helpers/postgres.ts';
import { type ServerProcess, startServer } from './helpers/server-process.ts';

/** The per-owner quotas of decisions §25, on the fixed clock, on both stores. */

type QuotaBody = { detail: string; retry_after: number; quota?: string; next_step?: string };

const HOUR = 3600_000;

/** 429 of the named quota, with retry_after, the Retry-After header and a detail that names it. */
function expectQuota(res: LightMyRequestResponse, quota: string): QuotaBody {
  expectStatus(res, 429);
  const body = json<QuotaBody>(res);
  assert.equal(body.quota, quota);
  assert.match(body.detail, /^rate limit exceeded: /);
  assert.ok(body.retry_after >= 1, `retry_after ${body.retry_after}`);
  assert.equal(res.headers['retry-after'], String(body.retry_after));
  return body;
}

function stepup(t: TestApp, agent: TestAgent, site: string): Promise<LightMyRequestResponse> {
  return agent.jwt().then((jwt) => t.app.inject({ method: 'POST', url: '/api/v1/stepup', remoteAddress: remoteAddress(), payload: { agent_id: agent.id, site, action: 'pay 10 EUR', agent_jwt: jwt } }));
}

async function pendingOf(t: TestApp, auth: Record<string, string>): Promise<unknown[]> {
  const me = await t.app.inject({ url: '/api/me', headers: auth });
  expectStatus(me, 200);
  return json<{ pending: unknown[] }>(me).pending;
}

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`per-owner quotas (${backend})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp({ backend });
    });
    after(() => t.close());

    it(`open requests of all kinds: ${QUOTAS.openRequestsPerOwner} per owner, then 429 until the oldest expires; another owner is not affected`, async () => {
      const owner = await signUp(t.app);
      const [a, b] = [await createAgent(t, owner, 'A'), await createAgent(t, owner, 'B')];
      await createGrant(t, b, { site: 'bank.example' });
      t.clock.advance(1000);
      const oldestExpiry = t.clock.now() + 300_000;
      expectStatus(await stepup(t, b, 'bank.example'), 200);
      t.clock.advance(1000);
      // Access requests of two agents at many sites, and the step-up: 50 open in all.
      for (let i = 1; i < QUOTAS.openRequestsPerOwner; i++) expectStatus(await postAccessRequest(t, i % 2 ? a : b, { site: `s${i}.example` }), 200);
      assert.equal((await pendingOf(t, owner.auth)).length, QUOTAS.openRequestsPerOwner);

      const refused = expectQuota(await postAccessRequest(t, a, { site: 'one-more.example' }), 'open_requests');
      assert.match(refused.detail, /50 open requests/);
      assert.equal(refused.retry_after, Math.ceil((oldestExpiry - t.clock.now()) / 1000), 'when the oldest open request expires');
      expectQuota(await stepup(t, b, 'bank.example'), 'open_requests');
      assert.equal((await pendingOf(t, owner.auth)).length, QUOTAS.openRequestsPerOwner, 'nothing was stored');

      const other = await createAgent(t, undefined, 'Other');
      expectStatus(await postAccessRequest(t, other, { site: 'one-more.example' }), 200);

      // The oldest (the step-up) expires: room for exactly one.
      t.clock.set(oldestExpiry);
      expectStatus(await postAccessRequest(t, a, { site: 'one-more.example' }), 200);
      expectQuota(await postAccessRequest(t, a, { site: 'two-more.example' }), 'open_requests');
    });

    it('an answered request makes room at once', async () => {
      const owner = await signUp(t.app);
      const agent = await createAgent(t, owner);
      const txns: string[] = [];
      for (let i = 0; i < QUOTAS.openRequestsPerOwner; i++) txns.push(await accessRequest(t, agent, { site: `room${i}.example` }));
      expectQuota(await postAccessRequest(t, agent, { site: 'next.example' }), 'open_requests');
      expectStatus(await respond(t, owner, txns[0] as string, { approve: false }), 200);
      expectStatus(await postAccessRequest(t, agent, { site: 'next.example' }), 200);
    });

    it('racing requests cannot pass the open-requests quota (the owner lock)', async () => {
      const owner = await signUp(t.app);
      const agents = [await createAgent(t, owner, 'R1'), await createAgent(t, owner, 'R2')];
      const answers = await Promise.all(Array.from({ length: 80 }, (_, i) => postAccessRequest(t, agents[i % 2] as TestAgent, { site: `race${i}.example` })));
      const codes = answers.map((r) => r.statusCode);
      assert.equal(codes.filter((c) => c === 200).length, QUOTAS.openRequestsPerOwner, codes.join(' '));
      assert.equal(codes.filter((c) => c === 429).length, 80 - QUOTAS.openRequestsPerOwner, codes.join(' '));
      assert.equal((await pendingOf(t, owner.auth)).length, QUOTAS.openRequestsPerOwner);
    });

    it(`access requests: ${QUOTAS.accessRequestsPerAgentPerHour} per agent per hour across all sites; another agent of the owner keeps its own`, async () => {
      const owner = await signUp(t.app);
      const agent = await createAgent(t, owner);
      t.clock.set(Math.ceil(t.clock.now() / HOUR) * HOUR);
      const windowEnd = t.clock.now() + HOUR;
      for (let i = 0; i < QUOTAS.accessRequestsPerAgentPerHour; i++) {
        const txn = await accessRequest(t, agent, { site: `h${i}.example` });
        // The owner answers each, so the open-requests quota is never what refuses.
        expectStatus(await respond(t, owner, txn, { approve: false }), 200);
      }
      t.clock.advance(10 * 60_000);
      const refused = expectQuota(await postAccessRequest(t, agent, { site: 'h-more.example' }), 'access_requests_per_hour');
      assert.match(refused.detail, /60 access requests per hour/);
      assert.equal(refused.retry_after, Math.ceil((windowEnd - t.clock.now()) / 1000));
      expectStatus(await postAccessRequest(t, await createAgent(t, owner, 'Sibling'), { site: 'h-more.example' }), 200);
      t.clock.set(windowEnd);
      expectStatus(await postAccessRequest(t, agent, { site: 'h-more.example' }), 200);
    });

    it(`sites with a live grant: ${QUOTAS.liveSitesPerOwner} per owner; a new site is refused (429), a site already granted is not, and the approval that would pass it is 409`, async () => {
      const owner = await ownerWithPasskey(t);
      const agent = await createAgent(t, owner);
      const sibling = await createAgent(t, owner, 'Sibling');
      // A request for a new site filed while there is room, answered only once the quota is full.
      const waiting = await accessRequest(t, agent, { site: 'late.example' });
      for (let i = 0; i < QUOTAS.liveSitesPerOwner - 1; i++) await createGrant(t, agent, { site: `g${i}.example` });
      const expiring = await createGrant(t, sibling, { site: 'expiring.example', expiresAt: t.clock.now() + 120_000 });

      const refused = expectQuota(await postAccessRequest(t, sibling, { site: 'new.example' }), 'live_sites');
      assert.match(refused.detail, /500 sites/);
      assert.equal(refused.retry_after, 120, 'when the soonest grant expires');
      // Another agent at a site the owner already has: no new site.
      expectStatus(await postAccessRequest(t, sibling, { site: 'g7.example' }), 200);

      const options = await t.app.inject({ url: `/api/txn/${waiting}/assertion-options`, headers: owner.auth });
      expectStatus(options, 409);
      assert.match(json<{ detail: string }>(options).detail, /live access at 500 sites.*revoke access at a site you no longer use/);
      assert.equal(json<{ quota: string }>(options).quota, 'live_sites');

      // Room again once a grant lapses: the request still waited, and the approval goes through.
      t.clock.set(expiring.expiresAt as number);
      expectStatus(await approve(t, owner, waiting), 200);
      expectQuota(await postAccessRequest(t, sibling, { site: 'new.example' }), 'live_sites');
    });

    it('the approval is checked again inside its transaction (a grant made between options and response)', async () => {
      const owner = await ownerWithPasskey(t);
      const agent = await createAgent(t, owner);
      const waiting = await accessRequest(t, agent, { site: 'last.example' });
      for (let i = 0; i < QUOTAS.liveSitesPerOwner - 1; i++) await createGrant(t, agent, { site: `h${i}.example` });
      const options = json<{ options: { challenge: string } }>(await t.app.inject({ url: `/api/txn/${waiting}/assertion-options`, headers: owner.auth })).options;
      await createGrant(t, agent, { site: 'sneaked-in.example' });
      const res = await respond(t, owner, waiting, { approve: true, assertion: owner.authenticator.assert(options) });
      expectStatus(res, 409);
      assert.equal(json<{ quota: string }>(res).quota, 'live_sites');
      const me = json<{ pending: { id: string }[] }>(await t.app.inject({ url: '/api/me', headers: owner.auth }));
      assert.ok(me.pending.some((p) => p.id === waiting), 'the request stays pending');
    });

    it(`flag changes: ${QUOTAS.flagChangesPerAgentPerHour} per agent per hour, then 429; another agent is not affected`, async () => {
      const owner = await signUp(t.app);
      const [agent, other] = [await createAgent(t, owner), await createAgent(t, owner, 'Other')];
      t.clock.set(Math.ceil(t.clock.now() / HOUR) * HOUR);
      const flag = (id: string, value: string) => t.app.inject({ method: 'POST', url: `/api/agents/${id}/flag`, headers: owner.auth, payload: { flag: value } });
      for (let i = 0; i < QUOTAS.flagChangesPerAgentPerHour; i++) expectStatus(await flag(agent.id, i % 2 ? 'ok' : 'suspicious'), 200);
      const refused = expectQuota(await flag(agent.id, 'revoked'), 'flag_changes_per_hour');
      assert.match(refused.detail, /at most 30 times per hour/);
      expectStatus(await flag(other.id, 'suspicious'), 200);
      t.clock.advance(HOUR);
      expectStatus(await flag(agent.id, 'revoked'), 200);
    });

    it('/api/me `pending` is capped at the quota even when more rows are open (filed before the quota existed)', async () => {
      const owner = await signUp(t.app);
      const agent = await createAgent(t, owner);
      const record = await t.services.store.agents.byId(agent.id);
      assert.ok(record);
      for (let i = 0; i < 60; i++) await t.services.store.authzRequests.create(newPendingRequest(record, `old${i}.example`, t.clock.now() + i, { kind: 'initial', scopes: ['list'], userInfo: [], action: null, grantId: null }));
      const pending = (await pendingOf(t, owner.auth)) as { site: string }[];
      assert.equal(pending.length, QUOTAS.openRequestsPerOwner);
      assert.equal(pending[0]?.site, 'old59.example', 'newest first');
    });

    it('GET /api/grants pages with offset and limit; agent statuses keep the newest sites only', async () => {
      const owner = await signUp(t.app);
      const agent = await createAgent(t, owner);
      for (let i = 0; i < 5; i++) await createGrant(t, agent, { site: `p${i}.example`, createdAt: t.clock.now() + i });
      const page = async (q: string) => json<{ site: string }[]>(await t.app.inject({ url: `/api/grants?${q}`, headers: owner.auth })).map((g) => g.site);
      assert.deepEqual(await page('limit=2'), ['p4.example', 'p3.example']);
      assert.deepEqual(await page('limit=2&offset=2'), ['p2.example', 'p1.example']);
      assert.deepEqual(await page('limit=2&offset=4'), ['p0.example']);
      assert.equal((await page('')).length, 5);
      expectStatus(await t.app.inject({ url: '/api/grants?limit=501', headers: owner.auth }), 422);

      const record = await t.services.store.agents.byId(agent.id);
      assert.ok(record);
      for (let i = 0; i <= STATUS_SITES_KEPT; i++) {
        t.clock.advance(1000);
        await t.services.agentStatuses.report(record, { site: `st${i}.example`, status: 'ok', ip: null });
      }
      const statuses = json<{ site: string }[]>(await t.app.inject({ url: `/api/agents/${agent.id}/statuses`, headers: owner.auth }));
      assert.equal(statuses.length, STATUS_SITES_KEPT);
      assert.equal(statuses[0]?.site, `st${STATUS_SITES_KEPT}.example`);
      assert.ok(!statuses.some((x) => x.site === 'st0.example'), 'the oldest site was dropped');
    });

    it('live agents: racing creations cannot pass the cap of 100 (the owner lock)', async () => {
      const owner = await signUp(t.app);
      for (let i = 0; i < 98; i++) {
        if (i % 30 === 0) t.clock.advance(HOUR);
        await createAgent(t, owner, `A${i}`);
      }
      t.clock.advance(HOUR);
      const tries = await Promise.all(Array.from({ length: 6 }, (_, i) => createAgent(t, owner, `Racer${i}`).then(() => 200, (e: Error) => (/409/.test(e.message) ? 409 : 500))));
      assert.deepEqual(tries.sort(), [200, 200, 409, 409, 409, 409]);
    });
  });
}

/**
 * The attack of the security review (issue 14, item 4): an agent sends access requests for ever new
 * sites as fast as it can, against the real server over HTTP. Before the quotas 3,000 requests went
 * through in 62 s and GET /api/me grew to 797 KB.
 */
for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`an agent flooding its owner, over HTTP (${backend})`, () => {
    let server: ServerProcess;
    let dropDb: (() => Promise<void>) | undefined;
    before(async () => {
      const db = backend === 'postgres' ? await freshPostgresDatabase() : undefined;
      dropDb = db?.drop;
      server = await startServer({ name: `flood-${backend}`, env: db ? { DATABASE_URL: db.url } : {}, healthyWithinMs: 90_000 });
    });
    after(async () => {
      await server?.stop();
      await dropDb?.();
    });

    it('gets 429 with retry_after past the quotas, across sites; /api/me stays small; its sibling and another owner are not affected', async () => {
      const owner = await HttpOwner.signUp(server, server.baseUrl, { label: 'flooded' });
      const flooder = await remoteAgent(server, owner, 'Flooder');
      const ATTEMPTS = 200;
      const answers: Reply<{ txn_id?: string; detail?: string; retry_after?: number; quota?: string }>[] = [];
      let next = 0;
      // As fast as it can: 20 requests in flight at a time, every one for a new site.
      await Promise.all(Array.from({ length: 20 }, async () => {
        while (next < ATTEMPTS) {
          const i = next++;
          answers.push(await remoteAccessRequest(server, flooder, `flood${i}.example`));
        }
      }));
      const accepted = answers.filter((a) => a.status === 200);
      const refused = answers.filter((a) => a.status === 429);
      assert.equal(accepted.length, QUOTAS.openRequestsPerOwner, answers.map((a) => a.status).join(' '));
      assert.equal(refused.length, ATTEMPTS - QUOTAS.openRequestsPerOwner);
      for (const r of refused) {
        assert.ok((r.body.retry_after ?? 0) >= 1, JSON.stringify(r.body));
        assert.equal(r.headers.get('retry-after'), String(r.body.retry_after));
        assert.match(r.body.detail ?? '', /^rate limit exceeded: /);
      }
      const quotas = new Set(refused.map((r) => r.body.quota));
      assert.deepEqual([...quotas].sort(), ['access_requests_per_hour', 'open_requests'], 'the open requests fill up first; the hourly budget ends the flood');

      const me = await call(server, 'GET', '/api/me', undefined, owner.auth);
      assert.equal(me.status, 200);
      const bytes = Buffer.byteLength(JSON.stringify(me.body));
      assert.ok(bytes < 32 * 1024, `/api/me is ${bytes} bytes`);
      assert.equal((me.body as { pending: unknown[] }).pending.length, QUOTAS.openRequestsPerOwner);

      // The owner clears the cards: the flooder's hourly budget is still spent, its sibling's is not.
      for (const a of accepted) await owner.deny(a.body.txn_id as string);
      assert.equal((await owner.pending()).length, 0);
      const again = await remoteAccessRequest(server, flooder, 'after-clearing.example');
      assert.equal(again.status, 429);
      assert.equal((again.body as { quota?: string }).quota, 'access_requests_per_hour');
      const sibling = await remoteAgent(server, owner, 'Sibling');
      assert.equal((await remoteAccessRequest(server, sibling, 'after-clearing.example')).status, 200);

      const otherOwner = await HttpOwner.signUp(server, server.baseUrl, { label: 'bystander' });
      const bystander = await remoteAgent(server, otherOwner, 'Bystander');
      assert.equal((await remoteAccessRequest(server, bystander, 'flood1.example')).status, 200);
    });
  });
}
