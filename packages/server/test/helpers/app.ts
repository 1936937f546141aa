import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { buildApp, type Built } from '../../src/app.ts';
import { type Config, parseConfig } from '../../src/config/config.ts';
import { FixedClock } from '../../src/clock.ts';
import { openSqliteStore } from '../../src/store/sqlite/open.ts';
import { openPostgresStore } from '../../src/store/postgres/open.ts';
import type { Store } from '../../src/store/ports/index.ts';
import { freshPostgresDatabase } from './postgres.ts';

export interface TestApp extends Built {
  clock: FixedClock;
  config: Config;
  close(): Promise<void>;
}

/**
 * An app over a fresh store (SQLite in a temp dir by default, or a fresh PostgreSQL database) with
 * a fixed clock. `env` overrides configuration.
 */
export async function testApp(opts: { env?: Record<string, string>; backend?: 'sqlite' | 'postgres'; clock?: FixedClock; logStream?: NodeJS.WritableStream } = {}): Promise<TestApp> {
  const dir = mkdtempSync(join(tmpdir(), 'mandate-test-'));
  const config = parseConfig({ BASE_URL: 'http://localhost:8080', DATA_DIR: dir, LOG_LEVEL: 'silent', ...opts.env });
  let store: Store;
  let dropDb: (() => Promise<void>) | undefined;
  if (opts.backend === 'postgres') {
    const db = await freshPostgresDatabase();
    store = await openPostgresStore(db.url);
    dropDb = db.drop;
  } else {
    copyFileSync(await migratedSqliteFile(), join(dir, 'mandate.db'));
    store = await openSqliteStore(dir);
  }
  const clock = opts.clock ?? new FixedClock();
  // With a logStream the service logs there, at the configured LOG_LEVEL (tests of what logs hold).
  const built = await buildApp({ config, store, clock, ...(opts.logStream ? { logStream: opts.logStream } : { logger: false }) });
  await built.app.ready();
  return {
    ...built,
    clock,
    config,
    async close() {
      await built.app.close();
      await store.close();
      await dropDb?.();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

let sqliteTemplate: Promise<string> | undefined;

/**
 * An embedded database with every migration applied, made once per test process, for `testApp` to
 * copy: the migrations cost about 110 ms of CPU per store and a test process builds dozens of apps
 * (the store suites and the migration tests still migrate from empty).
 */
function migratedSqliteFile(): Promise<string> {
  sqliteTemplate ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mandate-test-template-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    await (await openSqliteStore(dir)).close();
    const file = join(dir, 'mandate.db');
    // A clean close checkpoints the write-ahead log into the file and removes it: the file is whole.
    assert.ok(!existsSync(`${file}-wal`), 'the template database closed with a write-ahead log left');
    return file;
  })();
  return sqliteTemplate;
}

let emailSeq = 0;

/** Signs up a fresh owner; returns its bearer token and a header helper. */
export async function signUp(app: FastifyInstance, email = `owner${++emailSeq}.${Date.now()}@example.com`, password = 'correct horse battery') {
  // A fresh client address per sign-up: sign-ups are limited per address (10 per hour).
  const res = await app.inject({ method: 'POST', url: '/api/users', remoteAddress: remoteAddress(), payload: { email, password } });
  if (res.statusCode !== 200) throw new Error(`sign-up failed: ${res.statusCode} ${res.body}`);
  const body = res.json() as { user: { id: string; email: string }; session_token: string };
  return { ...body, email, password, auth: { authorization: `Bearer ${body.session_token}` } };
}

export const json = <T = Record<string, unknown>>(res: LightMyRequestResponse): T => res.json() as T;

export const expectStatus = (res: LightMyRequestResponse, code: number): void => assert.equal(res.statusCode, code, `${res.statusCode} ${res.body}`);

let addr = 0;
/**
 * A fresh client address per request, so per-address throttles (sign-in, access requests) never trip
 * over the many requests of one test file under a clock that stands still.
 */
export const remoteAddress = (): string => `10.${(++addr >> 16) & 255}.${(addr >> 8) & 255}.${addr & 255}`;
