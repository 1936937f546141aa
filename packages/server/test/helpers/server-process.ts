import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureBuilt } from '../../../../scripts/build-if-stale.mjs';
import { runNode } from './child-process.ts';
import { until } from './until.ts';

/**
 * The real server as its own process, built as `npm start` runs it (`dist/main.js`, built first when
 * missing or stale, with no TypeScript loader: `no-typescript-loader.mjs` fails any attempt to load
 * TypeScript), for the end-to-end tests: on a free port of 127.0.0.1, healthy (GET /api/healthz) before `startServer` returns, stopped by `stop()`
 * (SIGTERM, then SIGKILL after 5 s) and in any case when the test process exits.
 */

const SERVER_DIR = fileURLToPath(new URL('../..', import.meta.url));
const NO_TYPESCRIPT = fileURLToPath(new URL('./no-typescript-loader.mjs', import.meta.url));

export interface ServerProcess {
  name: string;
  port: number;
  /** The public base URL (BASE_URL): `http://localhost:<port>` unless `env` set another. */
  baseUrl: string;
  /** Where the process listens, for Node's own requests: `http://127.0.0.1:<port>` (no localhost lookup). */
  url: string;
  /** Everything the process wrote to stdout and stderr so far. */
  logs(): string;
  /** The server's process id (the node itself, not a wrapper). */
  pid: number;
  /** Whether the process is still running. */
  alive(): boolean;
  /** The exit code once the process has ended (null when a signal ended it unhandled). */
  exited: Promise<number | null>;
  /** Sends `signal` (SIGKILL: a crash, no shutdown code runs) and waits until the process is gone. */
  kill(signal: NodeJS.Signals): Promise<void>;
  stop(): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/**
 * Starts a server, on `port` when given (a test that must name the address in `env` first). `env` is laid over PORT, HOST=127.0.0.1, BASE_URL=http://localhost:<port>,
 * LOG_LEVEL=warn and a DATA_DIR of its own (a temp dir, removed by `stop()`, unless `env` names one).
 */
export async function startServer(opts: { env?: Record<string, string>; name?: string; healthyWithinMs?: number; port?: number } = {}): Promise<ServerProcess> {
  const name = opts.name ?? 'server';
  ensureBuilt(); // before anything is made, so a failed build leaves nothing behind
  const port = opts.port ?? (await freePort());
  const ownDataDir = opts.env?.DATA_DIR === undefined ? mkdtempSync(join(tmpdir(), 'mandate-e2e-')) : undefined;
  const env = { PORT: String(port), HOST: '127.0.0.1', BASE_URL: `http://localhost:${port}`, LOG_LEVEL: 'warn', ...(ownDataDir ? { DATA_DIR: ownDataDir } : {}), ...opts.env };
  const child = runNode(name, ['--enable-source-maps', '--import', NO_TYPESCRIPT, 'dist/main.js'], { cwd: SERVER_DIR, env });
  const server: ServerProcess = {
    name,
    port,
    baseUrl: env.BASE_URL,
    url: `http://127.0.0.1:${port}`,
    logs: child.output,
    pid: child.pid,
    alive: child.running,
    exited: child.exited,
    kill: child.kill,
    async stop() {
      await child.stop();
      if (ownDataDir) rmSync(ownDataDir, { recursive: true, force: true });
    },
  };

  const ms = opts.healthyWithinMs ?? 30_000;
  try {
    await until(`${name} to be healthy`, async () => {
      if (!child.running()) throw new Error(`${name} exited (${await child.exited}) before it was healthy:\n${child.output()}`);
      try {
        return (await fetch(`${server.url}/api/healthz`)).ok ? true : undefined;
      } catch {
        return undefined; // not listening yet
      }
    }, { ms, describe: child.output });
  } catch (e) {
    await server.stop();
    throw e;
  }
  return server;
}
