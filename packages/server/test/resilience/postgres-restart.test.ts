import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startPgInstance, type PgInstance } from '../helpers/pg-instance.ts';
import { startServer, type ServerProcess } from '../helpers/server-process.ts';
import { call } from '../helpers/over-http.ts';
import { until } from '../helpers/until.ts';
import { Workload } from '../helpers/workload.ts';

// PostgreSQL stopped and started again under load, on an instance of the test's own (the shared
// one serves other tests). While it is away the service answers 503 and nothing else in the 5xx
// range; afterwards it serves again without being restarted, and every write it acknowledged
// before, during or after the outage is there. test/database-outage.test.ts covers the same with a
// cut network path in-process; this one is a real database shutdown against a real server process.

describe('PostgreSQL restarted under load', { timeout: 240_000 }, () => {
  let pgi: PgInstance | undefined;
  let node: ServerProcess | undefined;

  before(async () => {
    pgi = await startPgInstance();
    node = await startServer({ name: 'node', env: { DATABASE_URL: pgi.url } });
  });

  after(async () => {
    await node?.stop();
    await pgi?.destroy();
  });

  it('answers 503 during the outage, recovers without a restart, loses no acknowledged write', async () => {
    assert.ok(pgi && node);
    const n = node;
    const work = await Workload.prepare(n, n.baseUrl);
    const count503 = () => work.statuses.get(503) ?? 0;
    try {
      work.start();
      await until('writes before the outage', () => (work.progress().refreshes >= 8 && work.progress().approvals >= 1 ? true : undefined), { ms: 60_000, everyMs: 20 });

      await pgi.stop();
      // The workers keep going: every request that needs the database now gets 503.
      await until('503 answers while PostgreSQL is down', () => (count503() >= 20 ? true : undefined), { ms: 60_000, everyMs: 20 });
      const health = await call(n, 'GET', '/api/healthz');
      assert.equal(health.status, 503, JSON.stringify(health.body));
      assert.deepEqual(health.body, { detail: 'service unavailable' });
      const before = work.progress();

      await pgi.start();
      await until('healthy again', async () => ((await call(n, 'GET', '/api/healthz')).status === 200 ? true : undefined), { ms: 60_000 });
      await until('acknowledged writes after the outage', () => {
        const p = work.progress();
        return p.refreshes >= before.refreshes + 6 && p.approvals >= before.approvals + 1 ? true : undefined;
      }, { ms: 60_000, everyMs: 20 });
    } finally {
      await work.stop();
    }

    assert.ok(n.alive(), 'the service process is still running');
    assert.equal(work.networkErrors, 0, 'every request got an HTTP answer');
    for (const [status, times] of work.statuses) {
      assert.ok(status < 500 || status === 503, `${times} answers with status ${status}\n${n.logs().slice(-4000)}`);
    }
    await work.verify(n);
  });
});
