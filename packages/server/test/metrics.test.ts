import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { parseConfig } from '../src/config/config.ts';
import { workerClient } from '../src/threads/worker-client.ts';
import { testApp } from './helpers/app.ts';
import { freePort, startServer, type ServerProcess } from './helpers/server-process.ts';
import { call, expectStatus, HttpOwner, remoteAgent, remoteCollect, remoteDecide, remoteGrant, remoteStepupRequest, remoteToken, type RemoteAgent } from './helpers/over-http.ts';

/** Prometheus metrics on their own port (docs/operations/metrics.md), scraped from the real server process. */

type Sample = { name: string; labels: Record<string, string>; value: number };

function parse(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

/** The sum of the samples of `name` whose labels include `labels` (0 when none). */
const value = (samples: Sample[], name: string, labels: Record<string, string> = {}): number =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((a, s) => a + s.value, 0);

/** TCP ports the process `pid` listens on (Linux: its socket fds matched against /proc/net/tcp*). */
function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch { /* closed meanwhile */ }
  }
  const ports: number[] = [];
  for (const table of ['tcp', 'tcp6']) {
    for (const row of readFileSync(`/proc/${pid}/net/${table}`, 'utf8').trim().split('\n').slice(1)) {
      const f = row.trim().split(/\s+/);
      if (f[3] === '0A' && inodes.has(f[9]!)) ports.push(parseInt(f[1]!.split(':')[1]!, 16));
    }
  }
  return ports.sort((a, b) => a - b);
}

const SITE = 'shop.example';
const URL_AT_SITE = `https://${SITE}/orders`;

describe('Prometheus metrics (METRICS_PORT)', () => {
  let server: ServerProcess;
  let metricsPort: number;
  let metricsUrl: string;
  before(async () => {
    metricsPort = await freePort();
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    server = await startServer({ name: 'metrics', env: { METRICS_PORT: String(metricsPort) } });
  });
  after(() => server?.stop());

  const scrape = async (): Promise<Sample[]> => {
    const res = await fetch(metricsUrl);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    return parse(await res.text());
  };

  it('counts requests by route pattern, passes, verify outcomes and step-ups as they happen', async () => {
    const t0 = await scrape();
    assert.ok(value(t0, 'mandate_process_cpu_user_seconds_total') > 0, 'default process metrics are on the same registry');
    assert.ok(t0.some((s) => s.name === 'mandate_outbox_backlog'), 'the outbox backlog is collected at scrape');

    const owner = await HttpOwner.signUp(server, server.baseUrl, { label: 'metrics' });
    const agent: RemoteAgent = await remoteAgent(server, owner);
    await remoteGrant(server, owner, agent, SITE);
    const before = await scrape();

    const pass = expectStatus(await remoteToken(server, agent, SITE), 200, 'pass').body.access_token;
    const body = async () => ({ access_token: pass, dpop: await agent.proof(pass, URL_AT_SITE, 'POST'), method: 'POST', url: URL_AT_SITE });
    const ok = await body();
    assert.equal((await call(server, 'POST', '/api/v1/verify', ok)).body.valid, true);
    const replay = await call(server, 'POST', '/api/v1/verify', ok);
    assert.equal(replay.body.error, 'dpop_replay');
    // A step-up: asked for, approved with the passkey, collected, used up in local mode.
    const txn = expectStatus(await remoteStepupRequest(server, agent, SITE, 'checkout'), 200, 'step-up request').body.txn_id;
    expectStatus(await remoteDecide(server, owner, txn), 200, 'approve step-up');
    const stepupToken = (await remoteCollect(server, agent, txn)).body.stepup_token;
    assert.ok(stepupToken, 'collected the step-up token');
    assert.equal((await call(server, 'POST', '/api/v1/stepup/verify', { stepup_token: stepupToken, site: SITE, action: 'checkout' })).body.valid, true);
    assert.equal((await call(server, 'POST', '/api/v1/stepup/verify', { stepup_token: stepupToken, site: SITE, action: 'checkout' })).body.error, 'stepup_used_or_expired');
    expectStatus(await call(server, 'GET', `/api/no-such-thing-${agent.id}`), 404, 'unknown address');

    const after = await scrape();
    const moved = (name: string, labels: Record<string, string> = {}) => value(after, name, labels) - value(before, name, labels);
    assert.equal(moved('mandate_passes_issued_total'), 1);
    assert.equal(moved('mandate_verify_total', { mode: 'cloud', outcome: 'ok' }), 1);
    assert.equal(moved('mandate_verify_total', { mode: 'cloud', outcome: 'dpop_replay' }), 1);
    assert.equal(moved('mandate_verify_total', { mode: 'stepup', outcome: 'ok' }), 1);
    assert.equal(moved('mandate_verify_total', { mode: 'stepup', outcome: 'stepup_used_or_expired' }), 1);
    assert.equal(moved('mandate_stepups_consumed_total'), 1);
    assert.equal(moved('mandate_http_requests_total', { route: '/api/v1/token', method: 'POST', status: '200' }), 1);
    assert.equal(moved('mandate_http_requests_total', { route: '/api/v1/verify', method: 'POST', status: '200' }), 2);
    // The collect above went to /api/v1/authz-requests/<txn id>: counted under the pattern.
    assert.equal(moved('mandate_http_requests_total', { route: '/api/v1/authz-requests/:txn_id', method: 'GET', status: '200' }), 1);
    assert.equal(moved('mandate_http_requests_total', { route: 'unmatched', method: 'GET', status: '404' }), 1);
    assert.equal(moved('mandate_http_request_duration_seconds_count', { route: '/api/v1/verify', method: 'POST' }), 2);
    assert.ok(!after.some((s) => Object.values(s.labels).some((v) => v.includes(agent.id) || v.includes(txn))), 'no label holds a raw address with an id');
    assert.ok(value(after, 'mandate_rev_seq') >= 0);
    assert.equal(moved('mandate_db_errors_total'), 0);
  });

  it('is served on its own port only: GET /metrics on the public port is a 404, other paths there are 404', async () => {
    assert.equal((await fetch(`${server.url}/metrics`)).status, 404);
    assert.equal((await fetch(`http://127.0.0.1:${metricsPort}/`)).status, 404);
    assert.equal((await fetch(metricsUrl, { method: 'POST' })).status, 404);
    assert.deepEqual(listeningPorts(server.pid), [server.port, metricsPort].sort((a, b) => a - b));
  });

  it('is off when METRICS_PORT is unset: the process listens on the public port only', async () => {
    const plain = await startServer({ name: 'no-metrics' });
    try {
      assert.deepEqual(listeningPorts(plain.pid), [plain.port]);
    } finally {
      await plain.stop();
    }
  });

  it('reads METRICS_PORT and METRICS_HOST strictly', () => {
    assert.equal(parseConfig({}).metrics, null);
    assert.equal(parseConfig({ METRICS_PORT: ' ' }).metrics, null);
    assert.deepEqual(parseConfig({ METRICS_PORT: '9464' }).metrics, { port: 9464, host: '127.0.0.1' });
    assert.deepEqual(parseConfig({ METRICS_PORT: '9464', METRICS_HOST: '10.0.0.5' }).metrics, { port: 9464, host: '10.0.0.5' });
    for (const bad of ['0', '65536', 'nine', '94.5']) assert.throws(() => parseConfig({ METRICS_PORT: bad }), /METRICS_PORT/);
  });
});

describe('PostgreSQL pool gauge (mandate_db_pool_connections)', () => {
  it('reports the pool on PostgreSQL, and is absent on SQLite', async () => {
    const pg = await testApp({ backend: 'postgres' });
    try {
      assert.equal((await pg.app.inject({ url: '/api/healthz' })).statusCode, 200);
      const samples = parse((await pg.services.metrics.scrape()).body);
      assert.ok(value(samples, 'mandate_db_pool_connections', { state: 'total' }) >= 1, 'a connection is open');
      assert.ok(samples.some((s) => s.name === 'mandate_db_pool_connections' && s.labels.state === 'waiting'));
    } finally {
      await pg.close();
    }
    const lite = await testApp();
    try {
      assert.ok(!parse((await lite.services.metrics.scrape()).body).some((s) => s.name === 'mandate_db_pool_connections'));
    } finally {
      await lite.close();
    }
  });
});

describe('worker thread restarts (mandate_worker_restarts_total)', () => {
  it('reports each worker started again after one stopped, not the first start', async () => {
    let restarts = 0;
    const code = `const { parentPort } = require('node:worker_threads');
      parentPort.on('message', (m) => { if (m === 'close' || m.die) process.exit(1); parentPort.postMessage({ id: m.id }); });`;
    const client = workerClient<{ die?: boolean }, { id: number }>(() => new Worker(code, { eval: true }), 'test', () => restarts++);
    try {
      await client.send({});
      assert.equal(restarts, 0, 'the first start is no restart');
      await assert.rejects(client.send({ die: true }), /stopped/);
      await client.send({});
      assert.equal(restarts, 1);
    } finally {
      await client.close('close', 1000);
    }
  });
});

describe('the metrics reference', () => {
  it('docs/operations/metrics.md describes every metric of the service (Node.js process metrics as one row)', async () => {
    const { Metrics } = await import('../src/metrics/metrics.ts');
    const names = (await new Metrics().registry.getMetricsAsJSON()).map((m) => m.name).filter((n) => !/^mandate_(process|nodejs)_/.test(n));
    const page = readFileSync(new URL('../../../docs/operations/metrics.md', import.meta.url), 'utf8');
    const documented = new Set([...page.matchAll(/^\| `(mandate_[a-z_]+)` \|/gm)].map((m) => m[1]));
    assert.ok(names.length >= 10);
    assert.deepEqual(names.filter((n) => !documented.has(n)), [], 'metrics missing from the reference');
    assert.deepEqual([...documented].filter((n) => !names.includes(n ?? '')), [], 'rows for metrics that do not exist');
  });
});
