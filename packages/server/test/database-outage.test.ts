import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { buildApp } from '../src/app.ts';
import { parseConfig } from '../src/config/config.ts';
import { openPostgresStore } from '../src/store/postgres/open.ts';
import type { Store } from '../src/store/ports/index.ts';
import { freshPostgresDatabase } from './helpers/postgres.ts';
import type { FastifyInstance } from 'fastify';
import type { Services } from '../src/services.ts';

/** A TCP relay in front of PostgreSQL that the test can cut and restore, as a network outage would. */
function relay(targetPort: number) {
  const sockets = new Set<net.Socket>();
  let server: net.Server | undefined;
  let port = 0;
  const start = () =>
    new Promise<void>((resolve) => {
      server = net.createServer((client) => {
        const upstream = net.connect(targetPort, '127.0.0.1');
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('error', () => s.destroy());
          s.on('close', () => sockets.delete(s));
        }
        client.pipe(upstream).pipe(client);
      });
      server.listen(port, '127.0.0.1', () => {
        port = (server!.address() as net.AddressInfo).port;
        resolve();
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server?.close(() => resolve());
    });
  return { start, stop, port: () => port };
}

describe('database outage (PostgreSQL)', () => {
  let db: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let store: Store;
  let app: FastifyInstance;
  let services: Services;
  const proxy = relay(5432);

  before(async () => {
    db = await freshPostgresDatabase();
    await proxy.start();
    const url = new URL(db.url);
    url.host = `127.0.0.1:${proxy.port()}`;
    store = await openPostgresStore(url.toString());
    ({ app, services } = await buildApp({ config: parseConfig({ DATABASE_URL: url.toString(), LOG_LEVEL: 'silent' }), store, logger: false }));
  });
  after(async () => {
    await app.close();
    await store.close();
    await proxy.stop();
    await db.drop();
  });

  it('answers 503 {"detail": "service unavailable"} while the database is away and recovers without a restart', async () => {
    assert.equal((await app.inject({ method: 'POST', url: '/api/users', payload: { email: 'a@example.com', password: 'password123' } })).statusCode, 200);
    await proxy.stop();
    const during = await app.inject({ method: 'POST', url: '/api/login', payload: { email: 'a@example.com', password: 'password123' } });
    assert.equal(during.statusCode, 503, during.body);
    assert.deepEqual(during.json(), { detail: 'service unavailable' });
    assert.match((await services.metrics.scrape()).body, /^mandate_db_errors_total 1$/m, 'the 503 is counted in the metrics');
    assert.equal((await app.inject({ url: '/api/healthz' })).statusCode, 503);
    await proxy.start();
    const afterwards = await app.inject({ method: 'POST', url: '/api/login', payload: { email: 'a@example.com', password: 'password123' } });
    assert.equal(afterwards.statusCode, 200, afterwards.body);
  });
});
