import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import { newId } from '../src/domain/ids.ts';
import { metricValue } from './helpers/metric-value.ts';
import { freePort } from './helpers/server-process.ts';
import { serverWithStore } from './helpers/server-with-store.ts';
import { seedRevokedGrants } from './helpers/revocation-seed.ts';
import { SseClient } from './helpers/sse-client.ts';
import { until } from './helpers/until.ts';

// The revocation event stream under load (decisions §30), against the real server process: a burst of
// 1,000 connections all get their snapshot (no 5xx), and clients that never read are dropped once
// their unsent bytes after the opening pass REVOCATION_STREAM_BUFFER_BYTES, while a reading client keeps its stream.

const rssMb = (pid: number): number => {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:')) ?? '';
  return Number(line.replace(/\D+/g, '')) / 1024;
};

describe('revocation event stream under load (sqlite)', { timeout: 300_000 }, () => {
  let metricsUrl = '';
  let metricsPort = 0;
  before(async () => {
    metricsPort = await freePort();
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  });
  // Every client connects from 127.0.0.1: one address, whose share of the node's streams is raised past the burst.
  const service = serverWithStore('sqlite', 'mandate-events-load-', () => ({ REVOCATION_KEEPALIVE_MS: '3000', REVOCATION_MAX_STREAMS_PER_ADDRESS: '2000', METRICS_PORT: String(metricsPort) }));
  const clients: SseClient[] = [];
  const sockets: Socket[] = [];
  after(() => {
    for (const c of clients) c.close();
    for (const s of sockets) s.destroy();
  });
  const streams = () => metricValue(metricsUrl, 'mandate_revocation_streams');

  it('serves a burst of 1,000 connections their snapshot, none refused', async () => {
    const n = service.node;
    assert.ok(n);
    const burst = Array.from({ length: 1000 }, () => new SseClient(`${n.url}/api/v1/revocation/events`));
    clients.push(...burst);
    await until('every stream of the burst to open', () => (burst.every((c) => c.status !== 0 || c.ended) ? true : undefined), { ms: 60_000 });
    assert.deepEqual([...new Set(burst.map((c) => c.status))], [200], 'every one answered 200');
    await until('every snapshot', () => (burst.every((c) => c.named('snapshot').length === 1) ? true : undefined), { ms: 60_000 });
    assert.equal(new Set(burst.map((c) => c.named('snapshot')[0]?.id)).size, 1, 'one list for all');
    await until('the gauge to count them', async () => ((await streams()) === 1000 ? true : undefined), { ms: 30_000 });
    for (const c of burst) c.close();
    await until('the gauge back to 0', async () => ((await streams()) === 0 ? true : undefined), { ms: 30_000 });
  });

  it('drops clients that never read once their unsent bytes pass the bound; a reading client keeps its stream', async () => {
    const n = service.node;
    assert.ok(n);
    const reader = new SseClient(`${n.url}/api/v1/revocation/events`);
    clients.push(reader);
    await until('the reader\'s snapshot', () => reader.named('snapshot')[0], { ms: 30_000 });
    const before = rssMb(n.pid);
    for (let i = 0; i < 20; i++) {
      const s = connect(n.port, '127.0.0.1');
      s.pause(); // never reads
      s.on('error', () => {});
      s.write(`GET /api/v1/revocation/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n`);
      sockets.push(s);
    }
    await until('the 20 stuck streams to open', async () => ((await streams()) === 21 ? true : undefined), { ms: 30_000 });
    // One delta of about 9 MB (60,000 revoked grants written into the server's database), more than
    // the kernel's socket buffers (about 4 MB here) and the bound (REVOCATION_STREAM_BUFFER_BYTES,
    // 1 MiB by default) together: each stuck stream has MBs unsent at the next keep-alive.
    const store = await service.openStore();
    try {
      await seedRevokedGrants(store, { userId: newId('u'), agentId: newId('ag'), count: 60_000, at: Date.now() });
    } finally {
      await store.close();
    }
    // Written from outside the service: the node finds the new rev_seq at its next read of the counter.
    await until('the long delta at the reader', () => reader.named('delta').find((e) => (e.data?.length ?? 0) > 4_000_000), { ms: 60_000 });
    let last: number | undefined;
    await until('every client that does not read to be dropped', async () => ((last = await streams()) === 1 ? true : undefined), { ms: 60_000, describe: () => `streams open: ${last}` });
    const grown = rssMb(n.pid) - before;
    assert.ok(grown < 300, `the node's memory stays bounded (grew ${grown.toFixed(0)} MB)`);
    const keepAlives = reader.events.filter((e) => e.comment !== undefined).length;
    await until('the reader to get another keep-alive', () => (reader.events.filter((e) => e.comment !== undefined).length > keepAlives ? true : undefined), { ms: 10_000 });
    assert.ok(!reader.ended, 'the reading client is still connected');
  });
});
