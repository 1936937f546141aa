import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { newId } from '../src/domain/ids.ts';
import { metricsEndpoint } from './helpers/metric-value.ts';
import { serverWithStore } from './helpers/server-with-store.ts';
import { seedRevokedGrants } from './helpers/revocation-seed.ts';
import { SseClient } from './helpers/sse-client.ts';
import { until } from './helpers/until.ts';

// The cap on open revocation event streams per node (REVOCATION_MAX_STREAMS, issue 31), against the
// real server process: past it a new stream is a 503 with Retry-After and a detail telling the client
// to poll meanwhile; the count holds under a burst; a place freed is taken again; /metrics counts both.
// The list is long (20,000 revoked grants, about 3 MB): the node's first build of it and its signature
// take real time, during which the whole burst arrives and waits; a cap checked against the streams
// already open (added only after that wait) would let every one of them in.

const CAP = 3;

describe('REVOCATION_MAX_STREAMS: the streams one node holds (sqlite)', { timeout: 120_000 }, () => {
  const metrics = metricsEndpoint();
  const service = serverWithStore('sqlite', 'mandate-events-cap-', () => ({ REVOCATION_MAX_STREAMS: String(CAP), METRICS_PORT: metrics.port() }));
  const node = () => {
    assert.ok(service.node);
    return service.node;
  };
  const clients: SseClient[] = [];
  const open = () => {
    const c = new SseClient(`${node().url}/api/v1/revocation/events`);
    clients.push(c);
    return c;
  };
  after(() => {
    for (const c of clients) c.close();
  });
  const metric = (name: string) => metrics.value(name);
  const answered = (c: SseClient) => (c.status !== 0 || c.ended ? true : undefined);
  const retryAfter = (value: unknown) => {
    const sec = Number(value);
    assert.ok(Number.isInteger(sec) && sec >= 1 && sec <= 10, `Retry-After is a few seconds, got ${String(value)}`);
  };

  let accepted: SseClient[] = [];

  it('a burst at a fresh node (every request waits for the first list): exactly the cap is accepted, the rest get 503 with Retry-After', async () => {
    const store = await service.openStore();
    try {
      await seedRevokedGrants(store, { userId: newId('u'), agentId: newId('ag'), count: 20_000, at: Date.now() });
    } finally {
      await store.close();
    }
    const burst = Array.from({ length: 12 }, open);
    await until('every answer', () => (burst.every(answered) ? true : undefined), { ms: 30_000 });
    accepted = burst.filter((c) => c.status === 200);
    const refused = burst.filter((c) => c.status === 503);
    assert.equal(accepted.length, CAP, `statuses: ${burst.map((c) => c.status).join(',')}`);
    assert.equal(refused.length, burst.length - CAP);
    for (const c of refused) retryAfter(c.headers['retry-after']);
    await until('the accepted streams\' snapshots', () => (accepted.every((c) => c.named('snapshot').length === 1) ? true : undefined), { ms: 10_000 });
    for (const c of refused) c.close();
  });

  it('past the cap: 503, Retry-After and a JSON detail saying to poll GET /api/v1/revocation meanwhile', async () => {
    const r = await fetch(`${node().url}/api/v1/revocation/events`, { headers: { accept: 'text/event-stream' } });
    assert.equal(r.status, 503);
    retryAfter(r.headers.get('retry-after'));
    assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
    const body = (await r.json()) as { detail: string };
    assert.match(body.detail, /maximum of revocation event streams/);
    assert.match(body.detail, /poll GET \/api\/v1\/revocation meanwhile/);
    // The list itself is still served to those refused the stream.
    assert.equal((await fetch(`${node().url}/api/v1/revocation`)).status, 200);
  });

  it('once a stream closes its place is taken again, and only one', async () => {
    accepted[0]?.close();
    await until('the gauge to count the closed stream out', async () => ((await metric('mandate_revocation_streams')) === CAP - 1 ? true : undefined), { ms: 10_000 });
    const again = [open(), open()];
    await until('both answered', () => (again.every(answered) ? true : undefined), { ms: 10_000 });
    assert.deepEqual(again.map((c) => c.status).sort(), [200, 503]);
    const taken = again.find((c) => c.status === 200);
    assert.ok(taken);
    await until('its snapshot', () => taken.named('snapshot')[0], { ms: 10_000 });
  });

  it('counts the open streams and the refusals in /metrics', async () => {
    await until('the gauge at the cap', async () => ((await metric('mandate_revocation_streams')) === CAP ? true : undefined), { ms: 10_000 });
    // 9 of the burst, the fetch, one of the two after the place was freed.
    assert.equal(await metric('mandate_revocation_streams_refused_total'), 11);
    for (const c of clients) c.close();
    await until('the gauge back to 0', async () => ((await metric('mandate_revocation_streams')) === 0 ? true : undefined), { ms: 10_000 });
    // Every place given back: the cap is free again.
    const fresh = Array.from({ length: CAP }, open);
    await until('the fresh streams answered', () => (fresh.every(answered) ? true : undefined), { ms: 10_000 });
    assert.deepEqual(fresh.map((c) => c.status), [200, 200, 200]);
  });
});

describe('a client gone while the node builds its first list (sqlite)', { timeout: 120_000 }, () => {
  const metrics = metricsEndpoint();
  const service = serverWithStore('sqlite', 'mandate-events-gone-', () => ({ REVOCATION_MAX_STREAMS: '2', METRICS_PORT: metrics.port() }));
  const clients: SseClient[] = [];
  after(() => {
    for (const c of clients) c.close();
  });
  const streams = () => metrics.value('mandate_revocation_streams');

  it('is not counted among the streams and gives its place back', async () => {
    const n = service.node;
    assert.ok(n);
    const store = await service.openStore();
    try {
      await seedRevokedGrants(store, { userId: newId('u'), agentId: newId('ag'), count: 20_000, at: Date.now() });
    } finally {
      await store.close();
    }
    // Two requests that hang up 50 ms in, while the node still reads and signs its first list (about 1 s for
    // this one): their 'close' comes before the stream is set up.
    const gone = await Promise.all([0, 1].map(() => new Promise<void>((resolve) => {
      const s = connect(n.port, '127.0.0.1', () => {
        s.write('GET /api/v1/revocation/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n');
        setTimeout(() => {
          s.destroy();
          resolve();
        }, 50);
      });
      s.on('error', () => {});
    })));
    assert.equal(gone.length, 2);
    // The first list is held once GET /api/v1/revocation answers (it waits for the same build).
    assert.equal((await fetch(`${n.url}/api/v1/revocation`)).status, 200);
    let last: number | undefined;
    await until('no stream counted for the clients gone', async () => ((last = await streams()) === 0 ? true : undefined), { ms: 10_000, describe: () => `streams: ${last}` });
    const fresh = [0, 1].map(() => new SseClient(`${n.url}/api/v1/revocation/events`));
    clients.push(...fresh);
    await until('both answered', () => (fresh.every((c) => c.status !== 0 || c.ended) ? true : undefined), { ms: 10_000 });
    assert.deepEqual(fresh.map((c) => c.status), [200, 200], 'their places were given back');
  });
});
