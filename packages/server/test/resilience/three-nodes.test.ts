import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { HOUSEKEEPING_LEASE } from '../../src/domain/housekeeping.ts';
import { openPostgresStore } from '../../src/store/postgres/open.ts';
import type { Store } from '../../src/store/ports/index.ts';
import { freshPostgresDatabase } from '../helpers/postgres.ts';
import { startServer, type ServerProcess } from '../helpers/server-process.ts';
import {
  call, expectStatus, HttpOwner, remoteAgent, remoteCollect, remoteDecide, remoteGrant, remoteStepupRequest, remoteToken,
  type RemoteAgent, type Reply,
} from '../helpers/over-http.ts';
import { until } from '../helpers/until.ts';

// Three service processes over one PostgreSQL database, as deployed behind a load balancer
// (docs/operations/scaling.md). Requests are spread over the nodes on purpose: whatever must hold
// for the deployment (single use, rate limits, revocation, background work once) must hold whichever
// node a request reaches. test/e2e/multi-node.e2e.test.ts races two nodes on tokens minted in the
// test; here every token comes from the real flows.

const RACERS = 30;
const SITE_URL = (site: string) => `https://${site}/orders`;

const nodes: ServerProcess[] = [];
let db: Awaited<ReturnType<typeof freshPostgresDatabase>> | undefined;
let store: Store | undefined;
let owner: HttpOwner;

const node = (i: number): ServerProcess => {
  const n = nodes[i % nodes.length];
  if (!n) throw new Error('no nodes');
  return n;
};
const allLogs = () => nodes.map((n) => `--- ${n.name}\n${n.logs().slice(-4000)}`).join('\n');
function assertNo5xx(replies: Reply<unknown>[]): void {
  for (const r of replies) assert.ok(r.status < 500, `5xx: ${r.status} ${JSON.stringify(r.body)}\n${allLogs()}`);
}
/** How many times a node logged a sweep (pino JSON lines at level info). */
const sweeps = (n: ServerProcess): number => n.logs().split('\n').filter((l) => l.includes('"msg":"housekeeping swept"')).length;

/** An agent of the owner holding a grant at `site`; each test uses its own, so counters do not mix. */
async function agentAt(site: string): Promise<RemoteAgent> {
  const agent = await remoteAgent(node(1), owner, site);
  await remoteGrant(node(2), owner, agent, site);
  return agent;
}

describe('three nodes over one PostgreSQL database', { timeout: 240_000 }, () => {
  before(async () => {
    db = await freshPostgresDatabase();
    // Sweeps every second, logged at info, so the test sees which node does the background work.
    const env = { DATABASE_URL: db.url, HOUSEKEEPING_INTERVAL_SECONDS: '1', LOG_LEVEL: 'info' };
    // A first: it applies the migrations and creates the signing key. B and C share its public base
    // URL (the issuer of every token), as nodes behind one load balancer do.
    const a = await startServer({ name: 'node A', env });
    nodes.push(a);
    nodes.push(...(await Promise.all(['node B', 'node C'].map((name) => startServer({ name, env: { ...env, BASE_URL: a.baseUrl } })))));
    store = await openPostgresStore(db.url, 2);
    owner = await HttpOwner.signUp(node(0), a.baseUrl);
  });

  after(async () => {
    await Promise.all(nodes.map((n) => n.stop()));
    await store?.close();
    await db?.drop();
  });

  it(`a step-up approved on one node is collected exactly once and used exactly once, ${RACERS} racers over three nodes`, async () => {
    const site = 'stepup.example';
    const agent = await agentAt(site);
    const txn = expectStatus(await remoteStepupRequest(node(0), agent, site, 'checkout'), 200, 'step-up request').body.txn_id;
    expectStatus(await remoteDecide(node(1), owner, txn), 200, 'approve step-up');

    const polls = await Promise.all(Array.from({ length: RACERS }, (_, i) => remoteCollect(node(i), agent, txn)));
    assertNo5xx(polls);
    const collected = polls.filter((p) => p.body.stepup_token !== undefined);
    assert.equal(collected.length, 1, 'exactly one poll collects the token');
    for (const p of polls.filter((x) => x.body.stepup_token === undefined)) assert.equal(p.body.stepup_token_error, 'step-up token already delivered', JSON.stringify(p.body));
    const stepup = String(collected[0]?.body.stepup_token);

    const pass = expectStatus(await remoteToken(node(2), agent, site), 200, 'token').body.access_token;
    const uses = await Promise.all(Array.from({ length: RACERS }, async (_, i) =>
      i % 2 === 0
        ? call(node(i), 'POST', '/api/v1/verify', { access_token: pass, dpop: await agent.proof(pass, SITE_URL(site)), method: 'GET', url: SITE_URL(site), stepup_token: stepup, action: 'checkout' })
        : call(node(i), 'POST', '/api/v1/stepup/verify', { stepup_token: stepup, site, action: 'checkout' })));
    assertNo5xx(uses);
    assert.equal(uses.filter((u) => u.body.valid === true).length, 1, 'exactly one use of the step-up token');
    for (const u of uses.filter((x) => x.body.valid !== true)) assert.equal(u.body.error, 'stepup_used_or_expired', JSON.stringify(u.body));
  });

  it(`a refresh token is accepted exactly once, ${RACERS} racers over three nodes`, async () => {
    const site = 'refresh.example';
    const agent = await agentAt(site);
    const refresh = expectStatus(await remoteToken(node(0), agent, site), 200, 'first token').body.refresh_token;
    const results = await Promise.all(Array.from({ length: RACERS }, (_, i) => remoteToken(node(i), agent, site, refresh)));
    assertNo5xx(results);
    const winners = results.filter((r) => r.status === 200);
    assert.equal(winners.length, 1);
    for (const r of results.filter((x) => x.status !== 200)) assert.equal(r.status, 401, JSON.stringify(r.body));
    // The winner's new refresh token is the one that works next, on any node.
    expectStatus(await remoteToken(node(1), agent, site, String(winners[0]?.body.refresh_token)), 200, 'the new refresh token');
  });

  it(`a DPoP proof (its jti) is accepted exactly once, ${RACERS} racers over three nodes`, async () => {
    const site = 'dpop.example';
    const agent = await agentAt(site);
    const pass = expectStatus(await remoteToken(node(0), agent, site), 200, 'token').body.access_token;
    const body = { access_token: pass, dpop: await agent.proof(pass, SITE_URL(site)), method: 'GET', url: SITE_URL(site) };
    const results = await Promise.all(Array.from({ length: RACERS }, (_, i) => call(node(i), 'POST', '/api/v1/verify', body)));
    assertNo5xx(results);
    assert.equal(results.filter((r) => r.body.valid === true).length, 1);
    for (const r of results.filter((x) => x.body.valid !== true)) assert.equal(r.body.error, 'dpop_replay', JSON.stringify(r.body));
  });

  it('rate limits count across nodes: the 11th step-up request in a minute is refused by every node', async () => {
    const site = 'limit.example';
    const agent = await agentAt(site);
    // The limit is a fixed one-minute window (10 per agent): start in a fresh window so the eleven
    // requests cannot straddle two. This waits; it asserts nothing about time.
    const leftInWindow = 60_000 - (Date.now() % 60_000);
    if (leftInWindow < 20_000) await new Promise((r) => setTimeout(r, leftInWindow + 200));
    for (let i = 0; i < 10; i++) expectStatus(await remoteStepupRequest(node(i), agent, site, `pay ${i}`), 200, `step-up request ${i + 1} on ${node(i).name}`);
    for (let i = 0; i < 3; i++) {
      const refused = await remoteStepupRequest(node(i), agent, site, 'one too many');
      assert.equal(refused.status, 429, `${node(i).name}: ${refused.status} ${JSON.stringify(refused.body)}`);
      assert.equal((refused.body as unknown as { detail: string }).detail, 'rate limit exceeded');
      assert.ok(Number(refused.headers.get('retry-after')) > 0, 'Retry-After');
    }
  });

  it('a grant revoked on node A is refused at once by cloud verify on nodes B and C', async () => {
    const site = 'revoke.example';
    const agent = await agentAt(site);
    const issued = expectStatus(await remoteToken(node(2), agent, site), 200, 'token').body;
    const verifyOn = async (n: ServerProcess) =>
      call(n, 'POST', '/api/v1/verify', { access_token: issued.access_token, dpop: await agent.proof(issued.access_token, SITE_URL(site)), method: 'GET', url: SITE_URL(site) });
    assert.equal((await verifyOn(node(1))).body.valid, true, 'valid before the revocation');

    const grants = expectStatus(await call<{ id: string; agent_id: string; site: string }[]>(node(1), 'GET', '/api/grants', undefined, owner.auth), 200, 'grants').body;
    const grant = grants.find((g) => g.agent_id === agent.id && g.site === site);
    assert.ok(grant, 'the grant is listed');
    expectStatus(await call(node(0), 'POST', `/api/grants/${grant.id}/revoke`, {}, owner.auth), 200, 'revoke on A');

    for (const n of [node(1), node(2)]) {
      const answer = await verifyOn(n);
      assert.equal(answer.body.valid, false, `${n.name}: ${JSON.stringify(answer.body)}`);
      assert.equal(answer.body.error, 'grant_revoked', `${n.name}: ${JSON.stringify(answer.body)}`);
      const refreshed = await remoteToken(n, agent, site, issued.refresh_token);
      assert.equal(refreshed.status, 403, `${n.name} refresh after revocation: ${JSON.stringify(refreshed.body)}`);
    }
    const snapshot = expectStatus(await call<{ revoked_grants: { agent: string; site: string }[] }>(node(2), 'GET', '/api/v1/revocation'), 200, 'revocation snapshot').body;
    assert.ok(snapshot.revoked_grants.some((g) => g.agent === agent.id && g.site === site), JSON.stringify(snapshot));
  });

  it('expiry sweeps run on exactly one node; when it is killed, another takes over', async () => {
    assert.ok(store && db);
    const holderNode = async (): Promise<ServerProcess | undefined> => {
      const lease = await store?.leases.get(HOUSEKEEPING_LEASE);
      return nodes.find((n) => n.alive() && lease?.holder.split('/')[1] === String(n.pid));
    };
    // Every node schedules a round every second; only the lease holder's rounds sweep.
    const first = await until('a lease holder that swept three times', async () => {
      const n = await holderNode();
      return n && sweeps(n) >= 3 ? n : undefined;
    });
    for (const n of nodes.filter((x) => x !== first)) assert.equal(sweeps(n), 0, `${n.name} swept while ${first.name} held the lease\n${allLogs()}`);

    // The holder crashes (no shutdown, the lease is not released): another node takes over once the
    // lease expires, and again only one of the two left sweeps.
    await first.kill('SIGKILL');
    const second = await until('another node holding the lease', holderNode);
    assert.notEqual(second, first);
    // The node logs the take-over after its first sweep finishes, which may be just after the lease row shows it.
    await until('the new holder logging the take-over', async () => (/housekeeping lease taken/.test(second.logs()) ? true : undefined));
    const before = sweeps(second);
    // Proof that the new holder really sweeps: an expired single-use record disappears.
    const key = `expired-${Date.now()}`;
    await store.singleUse.consume('dpop', key, Date.now() + 1, Date.now());
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      await until('the expired record swept', async () => {
        const r = await client.query<{ n: string }>('SELECT count(*) AS n FROM single_use WHERE key = $1', [key]);
        return r.rows[0]?.n === '0' ? true : undefined;
      });
    } finally {
      await client.end();
    }
    await until('two more sweeps by the new holder', () => (sweeps(second) >= before + 2 ? true : undefined));
    const third = nodes.find((n) => n !== first && n !== second);
    assert.ok(third);
    assert.equal(sweeps(third), 0, `${third.name} swept too\n${allLogs()}`);

    // A node stopped cleanly (SIGTERM) hands the lease back on its way out, instead of leaving it
    // to expire: right after it exits the lease is free or already the last node's.
    await second.stop();
    const lease = await store.leases.get(HOUSEKEEPING_LEASE);
    assert.ok(lease === undefined || lease.holder.split('/')[1] === String(third.pid), `lease still held by the stopped node: ${JSON.stringify(lease)}`);
    assert.doesNotMatch(second.logs(), /lease not released/);
    await until('the last node sweeping', () => (sweeps(third) >= 1 ? true : undefined));
  });
});
