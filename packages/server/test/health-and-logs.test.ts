import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { freePort, startServer, type ServerProcess } from './helpers/server-process.ts';

// Issue 27, item 12: the health check answers at /healthz too (where the demo shop and most probes
// look), the start-up message names the metrics listener, and a stopped service says so.
describe('health check paths, start-up and shutdown lines (real process)', () => {
  let server: ServerProcess;
  let metricsPort: number;
  before(async () => {
    metricsPort = await freePort();
    server = await startServer({ name: 'health-logs', env: { METRICS_PORT: String(metricsPort) } });
  });
  after(() => server?.stop());

  it('GET /healthz and GET /api/healthz answer the same 200, both in the OpenAPI document', async () => {
    for (const path of ['/healthz', '/api/healthz']) {
      const res = await fetch(`${server.url}${path}`);
      assert.equal(res.status, 200, path);
      assert.deepEqual(await res.json(), { status: 'ok', database: 'sqlite' }, path);
    }
    const openapi = await (await fetch(`${server.url}/openapi.json`)).json() as { paths: Record<string, { get?: unknown }> };
    assert.ok(openapi.paths['/healthz']?.get, '/healthz documented');
    assert.ok(openapi.paths['/api/healthz']?.get, '/api/healthz documented');
  });

  it('the start-up message names the metrics listener when METRICS_PORT is set', async () => {
    assert.match(server.logs(), new RegExp(`Prometheus metrics: http://127\\.0\\.0\\.1:${metricsPort}/metrics`));
  });

  it('SIGTERM logs one shutdown line and the process exits 0', async () => {
    assert.doesNotMatch(server.logs(), /Mandate is stopping/);
    await server.kill('SIGTERM');
    assert.equal(await server.exited, 0);
    const lines = server.logs().split('\n').filter((l) => /Mandate is stopping/.test(l));
    assert.deepEqual(lines, ['Mandate is stopping (SIGTERM): finishing the requests in flight, then exiting.']);
  });
});
