import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import { newId } from '../src/domain/ids.ts';
import { metricsEndpoint } from './helpers/metric-value.ts';
import { serverWithStore } from './helpers/server-with-store.ts';
import { revokeAllAt, seedGrants } from './helpers/revocation-seed.ts';
import { SseClient } from './helpers/sse-client.ts';
import { until } from './helpers/until.ts';

// The revocation event stream under load (decisions §30), against the real server process: a burst of
// 1,000 connections all get their snapshot (no 5xx), and clients that never read are dropped once
// their unsent bytes after the opening pass REVOCATION_STREAM_BUFFER_BYTES, while a reading client keeps its
// stream; the deltas written within the last keep-alive period do not count, so a client still reading a
// long delta is not dropped because another event followed it at once.

const rssMb = (pid: number): number => {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:')) ?? '';
  return Number(line.replace(/\D+/g, '')) / 1024;
};

describe('revocation event stream under load (sqlite)', { timeout: 300_000 }, () => {
  const metrics = metricsEndpoint();
  // Every client connects from 127.0.0.1: one address, whose share of the node's streams is raised past the burst.
  const service = serverWithStore('sqlite', 'mandate-events-load-', () => ({ REVOCATION_KEEPALIVE_MS: '3000', REVOCATION_MAX_STREAMS_PER_ADDRESS: '2000', METRICS_PORT: metrics.port() }));
  const clients: SseClient[] = [];
  const sockets: Socket[] = [];
  after(() => {
    for (const c of clients) c.close();
    for (const s of sockets) s.destroy();
  });
  const streams = () => metrics.value('mandate_revocation_streams');

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

  it('drops clients that never read once their unsent bytes pass the bound; a reading client keeps its stream', async (t) => {
    const n = service.node;
    assert.ok(n);
    // The test writes into the server's database with better-sqlite3, which is synchronous: while it
    // writes, this process (where the reading client reads) reads nothing, and a client that reads
    // nothing for a keep-alive period with over 1 MiB unsent is dropped, as it should be. So the
    // 60,000 grants are written before any stream opens, the store stays open (closing it checkpoints
    // MBs of write-ahead log, synchronously) until the end, and only their revocation (one statement)
    // is written while the streams are open.
    const store = await service.openStore();
    t.after(() => store.close());
    const agentId = newId('ag');
    await seedGrants(store, { userId: newId('u'), agentId, count: 60_000, at: Date.now() });
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
    await revokeAllAt(store, agentId, Date.now());
    // Written from outside the service: the node finds the new rev_seq at its next read of the counter.
    await until('the long delta at the reader', () => reader.named('delta').find((e) => (e.data?.length ?? 0) > 4_000_000), { ms: 60_000, describe: () => `the reader: ${reader.summary()}` });
    let last: number | undefined;
    await until('every client that does not read to be dropped', async () => ((last = await streams()) === 1 ? true : undefined), { ms: 60_000, describe: () => `streams open: ${last}` });
    const grown = rssMb(n.pid) - before;
    assert.ok(grown < 300, `the node's memory stays bounded (grew ${grown.toFixed(0)} MB)`);
    const keepAlives = reader.events.filter((e) => e.comment !== undefined).length;
    await until('the reader to get another keep-alive', () => (reader.events.filter((e) => e.comment !== undefined).length > keepAlives ? true : undefined), { ms: 10_000 });
    assert.ok(!reader.ended, 'the reading client is still connected');
  });
});

describe('revocation event stream: a client still reading a long delta (sqlite)', { timeout: 300_000 }, () => {
  const metrics = metricsEndpoint();
  // The default keep-alive period (15 s): what was written within it may wait unsent beyond the bound.
  const service = serverWithStore('sqlite', 'mandate-events-slow-', () => ({ METRICS_PORT: metrics.port() }));
  const deltasSent = async () => (await metrics.value('mandate_revocation_deltas_sent_total')) ?? 0;

  it('is not dropped when another delta follows before it has read the first; it gets both', async (t) => {
    const n = service.node;
    assert.ok(n);
    const store = await service.openStore();
    t.after(() => store.close());
    // As above: the grants are written before the stream opens (better-sqlite3 blocks this process).
    const many = newId('ag');
    const one = newId('ag');
    const userId = newId('u');
    await seedGrants(store, { userId, agentId: many, count: 60_000, at: Date.now() });
    await seedGrants(store, { userId, agentId: one, count: 1, at: Date.now() });
    const client = new SseClient(`${n.url}/api/v1/revocation/events`);
    t.after(() => client.close());
    await until('the snapshot', () => client.named('snapshot')[0], { ms: 30_000 });
    // The client stops reading (as one over a slow link, or busy, would for a moment); the long delta
    // fills the socket buffers and leaves MBs unsent at the node.
    client.pause();
    const got = () => `the client: ${client.summary()}`;
    const sent = await deltasSent();
    await revokeAllAt(store, many, Date.now());
    await until('the long delta written', async () => ((await deltasSent()) > sent ? true : undefined), { ms: 60_000 });
    // Another change at once: its delta is written while MBs of the first still wait unsent.
    await revokeAllAt(store, one, Date.now());
    // Counted per stream written to: a client dropped at this write leaves the count where it was.
    await until('the second delta written to the client', async () => ((await deltasSent()) > sent + 1 ? true : undefined), { ms: 60_000, describe: got });
    client.resume();
    await until('both deltas at the client', () => (client.named('delta').length === 2 ? true : undefined), { ms: 60_000, describe: got });
    const [long, short] = client.named('delta');
    assert.ok((long?.data?.length ?? 0) > 4_000_000, 'the long delta came whole');
    assert.ok(short?.data !== undefined && short.data.length < 10_000, 'then the short one');
    assert.equal(client.ended, false, 'the client keeps its stream');
  });
});
