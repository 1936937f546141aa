import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * A Node program as a child process of the test (an example site, the demo shop, the agent CLI),
 * with what it printed kept for assertions and failure messages. Whatever a failed test leaves
 * running is killed when the test process exits. (./server-process.ts starts the Mandate server with it.)
 */

/** The repository root: examples, docs and bins are run from there, as their guides say. */
export const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

export interface Child {
  readonly name: string;
  readonly pid: number;
  /** stdout and stderr as they came, interleaved. */
  output(): string;
  stdout(): string;
  stderr(): string;
  running(): boolean;
  /** Resolves with the exit code (null when ended by a signal) once the output is read to its end. */
  readonly exited: Promise<number | null>;
  /** Waits until the output contains `text`; fails when the process exits first or `ms` (30 s) pass. */
  waitFor(text: string, ms?: number): Promise<void>;
  /** Sends `signal` (SIGKILL: a crash, no shutdown code runs) and waits until the process is gone. */
  kill(signal: NodeJS.Signals): Promise<void>;
  /** SIGTERM, then SIGKILL after 5 s; resolves with the exit code. */
  stop(): Promise<number | null>;
}

export interface RunOptions {
  /** Laid over this process's environment. */
  env?: Record<string, string>;
  /** The repository root unless set. */
  cwd?: string;
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const p of live) p.kill('SIGKILL');
});

/** Runs `node <args>`. */
export function runNode(name: string, args: string[], opts: RunOptions = {}): Child {
  const proc = spawn(process.execPath, args, { cwd: opts.cwd ?? REPO_ROOT, env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(proc);
  let out = '';
  let stdout = '';
  let stderr = '';
  proc.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
    stdout += d.toString();
  });
  proc.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
    stderr += d.toString();
  });
  const exited = new Promise<number | null>((resolve) =>
    // 'close', not 'exit': by then stdout and stderr are read to their end.
    proc.once('close', (code) => {
      live.delete(proc);
      resolve(code);
    }),
  );
  const running = () => proc.exitCode === null && proc.signalCode === null;
  return {
    name,
    pid: proc.pid ?? 0,
    output: () => out,
    stdout: () => stdout,
    stderr: () => stderr,
    running,
    exited,
    async waitFor(text, ms = 30_000) {
      const deadline = Date.now() + ms;
      while (!out.includes(text)) {
        if (!running()) throw new Error(`${name} exited (${proc.exitCode ?? proc.signalCode}) before printing "${text}":\n${out}`);
        if (Date.now() > deadline) throw new Error(`${name} did not print "${text}" within ${ms} ms:\n${out}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async kill(signal) {
      if (!running()) return;
      proc.kill(signal);
      await exited;
    },
    async stop() {
      if (running()) {
        proc.kill('SIGTERM');
        const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
      return exited;
    },
  };
}

/** Runs a TypeScript file with `node --import tsx <file> <args>`, named after the file. */
export function runTs(file: string, opts: RunOptions & { args?: string[] } = {}): Child {
  return runNode(file, ['--import', 'tsx', file, ...(opts.args ?? [])], opts);
}
