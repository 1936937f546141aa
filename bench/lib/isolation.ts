import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { cpus } from 'node:os';

/**
 * `--isolate`: emulates a deployment where the service has its CPU to itself and the clients and the
 * database run elsewhere. The serving process (the baseline, or Mandate) is started on CPU 0; this
 * process (the load generator) and the PostgreSQL backends serving the benchmark's database run on
 * the other CPUs. Both sides of every ratio get the same treatment. Without it, everything shares all
 * CPUs (on a 2-CPU machine the database's own work then lowers Mandate's throughput but not the
 * baseline's).
 */
let enabled = false;

const others = (): string => `1-${Math.max(1, cpus().length - 1)}`;

export function isolationEnabled(): boolean {
  return enabled;
}

/** Moves this process (every thread) off CPU 0. Needs `taskset` (util-linux) and at least 2 CPUs. */
export function enableIsolation(): void {
  if (cpus().length < 2) throw new Error('--isolate needs at least 2 CPUs');
  execFileSync('taskset', ['-a', '-p', '-c', others(), String(process.pid)], { stdio: 'ignore' });
  enabled = true;
}

/** The command that starts a serving process: on CPU 0 when isolating (taskset execs it: the pid is the server's). */
export function servingCommand(execPath: string, args: string[]): [string, string[]] {
  return enabled ? ['taskset', ['-c', '0', execPath, ...args]] : [execPath, args];
}

/**
 * Puts the PostgreSQL backends of the benchmark's databases (process title `postgres: user
 * mandate_bench_... `) on the load generator's CPUs. Backends come and go with pool connections, so
 * this runs before every measured round. Other PostgreSQL processes are left alone.
 */
export function pinDatabaseBackends(): void {
  if (!enabled) return;
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc').filter((e) => /^\d+$/.test(e));
  } catch {
    return;
  }
  for (const pid of entries) {
    try {
      const title = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!title.startsWith('postgres: ') || !title.includes(' mandate_bench_')) continue;
      execFileSync('taskset', ['-a', '-p', '-c', others(), pid], { stdio: 'ignore' });
    } catch {
      // the backend ended meanwhile
    }
  }
}
