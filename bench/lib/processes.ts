import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createServer } from 'node:net';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { servingCommand } from './isolation.ts';

/** Server processes for the benchmarks: started on a free port, healthy before they are returned. */

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface Proc {
  name: string;
  pid: number;
  /** http://127.0.0.1:<port> */
  origin: string;
  port: number;
  logs(): string;
  /** Resident set size in MiB of the process and its child processes (Mandate's relay process), from /proc (Linux); NaN elsewhere. */
  rssMiB(): number;
  /**
   * CPU time used so far (all threads, user + system) by the process and its live child processes
   * (Mandate's take-over relay process, TAKEOVER_RELAY=process), in ms, from /proc (Linux); NaN elsewhere.
   */
  cpuMs(): number;
  /** The same for the child processes alone (0 when there are none). */
  childCpuMs(): number;
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
 * Runs an entry point with `env` laid over ours: a TypeScript one under tsx (`node --import tsx
 * <script>`), a built `.js` one with plain node (no tsx, no source maps: as `npm start` loads the build).
 */
export async function startProcess(o: { name: string; script: string; env: Record<string, string>; healthPath: string; port: number; nodeArgs?: string[]; cwd?: string }): Promise<Proc> {
  const loader = o.script.endsWith('.js') ? [] : ['--import', 'tsx'];
  const [command, args] = servingCommand(process.execPath, [...(o.nodeArgs ?? []), ...loader, o.script]);
  const child: ChildProcess = spawn(command, args, {
    cwd: o.cwd ?? REPO_ROOT,
    env: { ...process.env, ...o.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout?.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (log += d.toString()));
  const running = () => child.exitCode === null && child.signalCode === null;
  const killOnExit = () => {
    if (running()) child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  const origin = `http://127.0.0.1:${o.port}`;
  const proc: Proc = {
    name: o.name,
    pid: child.pid ?? -1,
    origin,
    port: o.port,
    logs: () => log,
    rssMiB: () => sum([child.pid ?? -1, ...descendants(child.pid ?? -1)], rssMiB),
    cpuMs: () => sum([child.pid ?? -1, ...descendants(child.pid ?? -1)], cpuMs),
    childCpuMs: () => sum(descendants(child.pid ?? -1), cpuMs),
    async stop() {
      process.removeListener('exit', killOnExit);
      if (!running()) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      if (running()) child.kill('SIGKILL');
    },
  };
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (!running()) throw new Error(`${o.name} exited before it was healthy:\n${log}`);
    try {
      if ((await fetch(`${origin}${o.healthPath}`)).ok) return proc;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  await proc.stop();
  throw new Error(`${o.name} not healthy after 60 s:\n${log}`);
}

/** USER_HZ: /proc reports CPU time in these ticks; 100 on every Linux Node supports. */
const TICKS_PER_SEC = 100;

/**
 * CPU time (user + system, ms) from the text of a /proc `stat` file, of a process or of one of its
 * threads (`/proc/<pid>/task/<tid>/stat`). Fields after the command name (which may hold spaces)
 * start at ")": utime and stime are the 12th and 13th.
 */
export function statCpuMs(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SEC;
}

/** CPU time of a process (ms) as [its main thread (the event loop), all its other threads], from /proc (Linux); NaN elsewhere. */
export function threadCpuMs(pid: number): [number, number] {
  let main = 0;
  let rest = 0;
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [NaN, NaN];
  }
  for (const t of tasks) {
    try {
      const ms = statCpuMs(readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8'));
      if (Number(t) === pid) main += ms;
      else rest += ms;
    } catch {
      // the thread ended meanwhile (its time is lost to both counts)
    }
  }
  return [main, rest];
}

/** The live child processes of `pid` and theirs (/proc/<pid>/task/<tid>/children). */
function descendants(pid: number): number[] {
  const found: number[] = [];
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      for (const c of readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).map(Number)) found.push(c, ...descendants(c));
    }
  } catch {
    // the process ended meanwhile, or not Linux
  }
  return found;
}

const sum = (pids: number[], read: (pid: number) => number): number => pids.reduce((total, pid) => total + read(pid), 0);

function cpuMs(pid: number): number {
  try {
    return statCpuMs(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return NaN;
  }
}

/**
 * CPU time used so far by every PostgreSQL server process of this machine (ms), from /proc; NaN where
 * there is none to read. On one machine the database shares the CPUs with the service and the load
 * generator, so its share per request explains part of the PostgreSQL figures (other users of the
 * same PostgreSQL server count too).
 */
export function postgresCpuMs(): number {
  let total = 0;
  let found = false;
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc').filter((e) => /^\d+$/.test(e));
  } catch {
    return NaN;
  }
  for (const pid of entries) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) !== 'postgres') continue;
      total += statCpuMs(stat);
      found = true;
    } catch {
      // the process ended meanwhile
    }
  }
  return found ? total : NaN;
}

function rssMiB(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m?.[1] === undefined ? NaN : Number(m[1]) / 1024;
  } catch {
    return NaN;
  }
}

/**
 * How a benchmark runs the Mandate server: `sources` under tsx (`packages/server/src/main.ts`, what
 * `npm run dev` does), or `dist`, the build as `npm start` runs it (`packages/server/dist/main.js` with
 * plain node). Under tsx the process also holds tsx, the TypeScript sources and their source maps:
 * about 4.5 MB more heap at rest and 70 MiB more RSS (bench/README.md, "Take-over relay").
 */
export type ServerBuild = 'sources' | 'dist';

/**
 * Makes the build of the checkout at `root` (this one by default) current, as `npm start` does before
 * it starts (scripts/build-if-stale.mjs: `tsc -b` and the SDK tarballs when missing or older than
 * their sources), so that `dist` never measures stale JavaScript.
 */
export function ensureServerBuilt(root: string = REPO_ROOT): void {
  const script = join(root, 'scripts/build-if-stale.mjs');
  if (!existsSync(script)) throw new Error(`${root} has no scripts/build-if-stale.mjs: build it yourself (npm run build) or run its server from sources`);
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', `const { ensureBuilt } = await import(${JSON.stringify(pathToFileURL(resolve(script)).href)}); ensureBuilt();`], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
  if (run.status !== 0) throw new Error(`the build of ${root} failed (exit ${run.status ?? run.signal})`);
}

/** The Mandate server over the given store (from sources unless `build` says `dist`); `env` adds settings (for A/B experiments). */
export async function startMandate(o: { name?: string; databaseUrl: string; dataDir: string; baseUrl: string; port: number; logLevel?: string; env?: Record<string, string>; cwd?: string; build?: ServerBuild }): Promise<Proc> {
  return startProcess({
    // BENCH_SERVER_CWD: another checkout of the repository to run the server from (the code before a change).
    ...(o.cwd === undefined ? (process.env.BENCH_SERVER_CWD ? { cwd: process.env.BENCH_SERVER_CWD } : {}) : { cwd: o.cwd }),
    name: o.name ?? 'mandate',
    script: o.build === 'dist' ? 'packages/server/dist/main.js' : 'packages/server/src/main.ts',
    port: o.port,
    healthPath: '/api/healthz',
    // e.g. BENCH_SERVER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the server under load.
    nodeArgs: process.env.BENCH_SERVER_NODE_ARGS?.split(' ').filter(Boolean) ?? [],
    env: {
      PORT: String(o.port),
      HOST: '127.0.0.1',
      BASE_URL: o.baseUrl,
      DATABASE_URL: o.databaseUrl,
      DATA_DIR: o.dataDir,
      LOG_LEVEL: o.logLevel ?? 'warn',
      ...o.env,
    },
  });
}

/** The baseline: a bare Fastify route doing one ES256 `jwtVerify` of the token it is sent (bench/lib/baseline-server.ts). */
export async function startBaseline(o: { jwk: object; port: number }): Promise<Proc> {
  return startProcess({
    name: 'baseline',
    script: 'bench/lib/baseline-server.ts',
    port: o.port,
    healthPath: '/healthz',
    // As BENCH_SERVER_NODE_ARGS, for the baseline (e.g. to profile both under the same load).
    nodeArgs: process.env.BENCH_BASELINE_NODE_ARGS?.split(' ').filter(Boolean) ?? [],
    env: { PORT: String(o.port), BASELINE_JWK: JSON.stringify(o.jwk) },
  });
}
