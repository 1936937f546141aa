import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request, type IncomingHttpHeaders } from 'node:http';
import { newId } from '../src/domain/ids.ts';
import { metricsEndpoint } from './helpers/metric-value.ts';
import { serverWithStore } from './helpers/server-with-store.ts';
import { seedRevokedGrants } from './helpers/revocation-seed.ts';
import { SseClient } from './helpers/sse-client.ts';
import { until } from './helpers/until.ts';

// One client's share of a node's revocation event streams (REVOCATION_MAX_STREAMS_PER_ADDRESS and
// _PER_NETWORK, under REVOCATION_MAX_STREAMS), against the real server process: without it one party
// could open every stream of the node and every other site would be refused (503) and left polling.
// Past its share a client gets 429 with Retry-After and a detail; other addresses still get streams;
// the node cap stays a 503. The clients connect from distinct loopback addresses (127.0.0.1, .2, .3:
// all local on Linux), as distinct peers do without a proxy; the IPv6 /48 share, which loopback cannot
// give (only ::1), goes through TRUST_PROXY and X-Forwarded-For, as behind a proxy.
// The domain's counting in detail: revocation-stream-shares.test.ts.

const CAP = 6;
const PER_ADDRESS = 2;

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: { detail?: string; retry_after?: number };
}

/** One request to the stream expected to be refused: its status, headers and JSON body (a 200 is cut off). */
function refusal(url: string, opts: { localAddress?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { accept: 'text/event-stream', ...opts.headers }, agent: false, ...(opts.localAddress ? { localAddress: opts.localAddress } : {}) }, (res) => {
      if (res.statusCode === 200) {
        req.destroy();
        return resolve({ status: 200, headers: res.headers, body: {} });
      }
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(text) as Answer['body'] }));
    });
    req.on('error', reject);
    req.end();
  });
}

const answered = (c: SseClient) => (c.status !== 0 || c.ended ? true : undefined);
const retryAfter = (value: unknown) => {
  const sec = Number(value);
  assert.ok(Number.isInteger(sec) && sec >= 3 && sec <= 7, `Retry-After is 3 to 7 s, got ${String(value)}`);
};

describe('REVOCATION_MAX_STREAMS_PER_ADDRESS: one address\'s share of a node\'s streams (sqlite)', { timeout: 120_000 }, () => {
  const metrics = metricsEndpoint();
  const service = serverWithStore('sqlite', 'mandate-events-share-', () => ({
    REVOCATION_MAX_STREAMS: String(CAP),
    REVOCATION_MAX_STREAMS_PER_ADDRESS: String(PER_ADDRESS),
    METRICS_PORT: metrics.port(),
  }));
  const url = () => {
    assert.ok(service.node);
    return `${service.node.url}/api/v1/revocation/events`;
  };
  const clients: SseClient[] = [];
  const open = (localAddress: string, headers: Record<string, string> = {}) => {
    const c = new SseClient(url(), headers, { localAddress });
    clients.push(c);
    return c;
  };
  after(() => {
    for (const c of clients) c.close();
  });
  const metric = (name: string) => metrics.value(name);

  let first: SseClient[] = [];

  it('a burst from one address at a fresh node: exactly its share is accepted, the rest get 429 with Retry-After', async () => {
    // A long list (about 3 MB): the node's first build and signature take real time, during which the
    // whole burst arrives and waits; a share counted only once streams are open would let all of it in.
    const store = await service.openStore();
    try {
      await seedRevokedGrants(store, { userId: newId('u'), agentId: newId('ag'), count: 20_000, at: Date.now() });
    } finally {
      await store.close();
    }
    const burst = Array.from({ length: 8 }, () => open('127.0.0.1'));
    await until('every answer', () => (burst.every(answered) ? true : undefined), { ms: 30_000 });
    first = burst.filter((c) => c.status === 200);
    const refused = burst.filter((c) => c.status === 429);
    assert.equal(first.length, PER_ADDRESS, `statuses: ${burst.map((c) => c.status).join(',')}`);
    assert.equal(refused.length, burst.length - PER_ADDRESS);
    for (const c of refused) retryAfter(c.headers['retry-after']);
    await until('the accepted streams\' snapshots', () => (first.every((c) => c.named('snapshot').length === 1) ? true : undefined), { ms: 10_000 });
    for (const c of refused) c.close();
  });

  it('past its share: 429, Retry-After, retry_after and a detail naming the share and what to do', async () => {
    const r = await refusal(url(), { localAddress: '127.0.0.1' });
    assert.equal(r.status, 429);
    retryAfter(r.headers['retry-after']);
    assert.match(r.headers['content-type'] ?? '', /^application\/json/);
    assert.equal(r.body.retry_after, Number(r.headers['retry-after']));
    assert.match(r.body.detail ?? '', /^rate limit exceeded: this client address .* holds its share of this node's revocation event streams: 2\./);
    assert.match(r.body.detail ?? '', /Close the streams it does not use; poll GET \/api\/v1\/revocation meanwhile/);
  });

  it('an X-Forwarded-For the service is not told to believe (no TRUST_PROXY) changes nothing: the peer is counted', async () => {
    const r = await refusal(url(), { localAddress: '127.0.0.1', headers: { 'x-forwarded-for': '192.0.2.55' } });
    assert.equal(r.status, 429);
  });

  it('other addresses still get their streams while the first holds its share; the node cap stays a 503', async () => {
    const second = [open('127.0.0.2'), open('127.0.0.2'), open('127.0.0.3'), open('127.0.0.3')];
    await until('the other addresses answered', () => (second.every(answered) ? true : undefined), { ms: 10_000 });
    assert.deepEqual(second.map((c) => c.status), [200, 200, 200, 200]);
    await until('their snapshots', () => (second.every((c) => c.named('snapshot').length === 1) ? true : undefined), { ms: 10_000 });
    // 2 + 2 + 2: the node holds its cap. A fourth address within its share is refused by the node.
    const full = await refusal(url(), { localAddress: '127.0.0.4' });
    assert.equal(full.status, 503);
    retryAfter(full.headers['retry-after']);
    assert.match(full.body.detail ?? '', /maximum of revocation event streams/);
  });

  it('a stream closed gives its place back to its address, and only one', async () => {
    first[0]?.close();
    await until('the gauge to count the closed stream out', async () => ((await metric('mandate_revocation_streams')) === CAP - 1 ? true : undefined), { ms: 10_000 });
    const again = [open('127.0.0.1'), open('127.0.0.1')];
    await until('both answered', () => (again.every(answered) ? true : undefined), { ms: 10_000 });
    assert.deepEqual(again.map((c) => c.status).sort(), [200, 429]);
  });

  it('counts the share refusals apart from the node-full refusals in /metrics', async () => {
    // 6 of the burst, the refusal read, the X-Forwarded-For one, one of the two after the close.
    assert.equal(await metric('mandate_revocation_streams_share_refused_total{share="address"}'), 9);
    assert.equal(await metric('mandate_revocation_streams_refused_total'), 1);
    for (const c of clients) c.close();
    await until('the gauge back to 0', async () => ((await metric('mandate_revocation_streams')) === 0 ? true : undefined), { ms: 10_000 });
    // Every share given back: the first address gets its full share again.
    const fresh = [open('127.0.0.1'), open('127.0.0.1')];
    await until('the fresh streams answered', () => (fresh.every(answered) ? true : undefined), { ms: 10_000 });
    assert.deepEqual(fresh.map((c) => c.status), [200, 200]);
  });
});

describe('REVOCATION_MAX_STREAMS_PER_NETWORK: the share of one IPv6 /48, behind a trusted proxy (sqlite)', { timeout: 120_000 }, () => {
  const metrics = metricsEndpoint();
  const service = serverWithStore('sqlite', 'mandate-events-share-net-', () => ({
    TRUST_PROXY: 'loopback',
    REVOCATION_MAX_STREAMS: '20',
    REVOCATION_MAX_STREAMS_PER_ADDRESS: '2',
    REVOCATION_MAX_STREAMS_PER_NETWORK: '3',
    METRICS_PORT: metrics.port(),
  }));
  const clients: SseClient[] = [];
  after(() => {
    for (const c of clients) c.close();
  });
  /** One stream from `client`, as the proxy on loopback names it; its status once answered. */
  const streamFrom = async (client: string): Promise<number> => {
    assert.ok(service.node);
    const c = new SseClient(`${service.node.url}/api/v1/revocation/events`, { 'x-forwarded-for': client });
    clients.push(c);
    await until(`the answer to ${client}`, () => answered(c), { ms: 30_000 });
    return c.status;
  };

  it('the /64s of one /48 share its share; another /48 is not affected', async () => {
    const statuses: number[] = [];
    for (const client of ['2001:db8:a:1::1', '2001:DB8:A:1::2', '2001:db8:a:1::3', '2001:db8:a:2::1', '2001:db8:a:2::2', '2001:db8:a:3::1', '2001:db8:b:1::1']) statuses.push(await streamFrom(client));
    // .1: two, then its address share; .2: one, then the /48 holds 3; .3: the /48 again; another /48: in.
    assert.deepEqual(statuses, [200, 200, 429, 200, 429, 429, 200]);
    const r = await refusal(`${service.node?.url}/api/v1/revocation/events`, { headers: { 'x-forwarded-for': '2001:db8:a:4::1' } });
    assert.equal(r.status, 429);
    assert.match(r.body.detail ?? '', /^rate limit exceeded: this client's IPv6 \/48 holds its share of this node's revocation event streams: 3\./);
    assert.equal(await metrics.value('mandate_revocation_streams_share_refused_total{share="address"}'), 1);
    assert.equal(await metrics.value('mandate_revocation_streams_share_refused_total{share="network"}'), 3);
    assert.equal(await metrics.value('mandate_revocation_streams_refused_total'), 0);
  });
});
