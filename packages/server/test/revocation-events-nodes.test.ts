import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type ServiceKeys, verifyRevocationDelta } from '@mandate/protocol';
import { freshPostgresDatabase } from './helpers/postgres.ts';
import { HttpOwner, call, expectStatus, remoteAgent } from './helpers/over-http.ts';
import { startServer, type ServerProcess } from './helpers/server-process.ts';
import { SseClient } from './helpers/sse-client.ts';
import { until } from './helpers/until.ts';

// Two nodes over one PostgreSQL database (decisions §30): a change committed through node A reaches a
// stream on node B (LISTEN/NOTIFY carries the rev_seq; B builds the list itself); a node killed
// mid-stream ends its streams. Arrival is asserted, not its time (the bench measures that).

describe('revocation event stream across nodes (postgres)', { timeout: 180_000 }, () => {
  let a: ServerProcess | undefined;
  let b: ServerProcess | undefined;
  let drop: (() => Promise<void>) | undefined;
  const clients: SseClient[] = [];
  before(async () => {
    const db = await freshPostgresDatabase();
    drop = db.drop;
    // One public BASE_URL for both nodes, as behind a load balancer: one issuer, one WebAuthn origin.
    a = await startServer({ name: 'node A', env: { DATABASE_URL: db.url }, healthyWithinMs: 90_000 });
    b = await startServer({ name: 'node B', env: { DATABASE_URL: db.url, BASE_URL: a.baseUrl }, healthyWithinMs: 90_000 });
  });
  after(async () => {
    for (const c of clients) c.close();
    await a?.stop();
    await b?.stop();
    await drop?.();
  });

  it('a revocation through node A reaches a stream on node B as a delta; killing B ends the stream', async () => {
    assert.ok(a && b);
    const nodeA = a;
    const nodeB = b;
    const stream = new SseClient(`${nodeB.url}/api/v1/revocation/events`);
    clients.push(stream);
    await until('the snapshot on node B', () => stream.named('snapshot')[0], { ms: 20_000 });
    const owner = await HttpOwner.signUp(nodeA, nodeA.baseUrl, { label: 'nodes' });
    const agent = await remoteAgent(nodeA, owner, 'Shopper');
    await owner.flag(agent.id, 'revoked');
    const revSeq = expectStatus(await call<{ rev_seq: number }>(nodeA, 'GET', '/api/v1/revocation'), 200, 'snapshot on A').body.rev_seq;
    const e = await until(`the delta to rev_seq ${revSeq} on node B`, () => stream.named('delta').find((d) => d.id === String(revSeq)), { ms: 20_000, everyMs: 20 });
    const keys = expectStatus(await call<ServiceKeys>(nodeB, 'GET', '/api/v1/jwks'), 200, 'jwks').body;
    const delta = await verifyRevocationDelta(e.data, { keys, issuer: nodeA.baseUrl, now: Math.floor(Date.now() / 1000) });
    assert.deepEqual(delta.added.revoked_agents.map((x) => x.id), [agent.id]);

    await nodeB.kill('SIGKILL');
    await until('the stream to end with its node', () => (stream.ended ? true : undefined), { ms: 10_000 });
  });
});
