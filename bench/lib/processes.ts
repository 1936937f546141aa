import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
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
  /** Resident set size in MiB, read from /proc (Linux); NaN elsewhere. */
  rssMiB(): number;
  /** CPU time the process used so far (all threads, user + system), in ms, from /proc (Linux); NaN elsewhere. */
  cpuMs(): number;
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

/** Runs a TypeScript entry point under tsx (`node --import tsx <script>`) with `env` laid over ours. */
export async function startProcess(o: { name: string; script: string; env: Record<string, string>; healthPath: string; port: number; nodeArgs?: string[]; cwd?: string }): Promise<Proc> {
  const [command, args] = servingCommand(process.execPath, [...(o.nodeArgs ?? []), '--import', 'tsx', o.script]);
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
    rssMiB: () => rssMiB(child.pid ?? -1),
    cpuMs: () => cpuMs(child.pid ?? -1),
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

/** The Mandate server (`packages/server/src/main.ts`) over the given store; `env` adds settings (for A/B experiments). */
export async function startMandate(o: { name?: string; databaseUrl: string; dataDir: string; baseUrl: string; port: number; logLevel?: string; env?: Record<string, string>; cwd?: string }): Promise<Proc> {
  return startProcess({
    // BENCH_SERVER_CWD: another checkout of the repository to run the server from (the code before a change).
    ...(o.cwd === undefined ? (process.env.BENCH_SERVER_CWD ? { cwd: process.env.BENCH_SERVER_CWD } : {}) : { cwd: o.cwd }),
    name: o.name ?? 'mandate',
    script: 'packages/server/src/main.ts',
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
    env: { PORT: String(o.port), BASELINE_JWK: JSON.stringify(o.jwk) },
  });
}
