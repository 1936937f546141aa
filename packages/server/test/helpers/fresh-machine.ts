import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { delimiter, dirname, join, relative, resolve, sep } from 'node:path';
import { REPO_ROOT } from './child-process.ts';

/**
 * An agent's machine that has Node and npm and nothing of this repository, for running a command
 * exactly as the app prints it (decisions §26): an empty folder outside the repository (no
 * node_modules above it), a HOME of its own (the agent's key goes to its ~/.mandate-agent), an empty
 * npm cache (nothing from an earlier run), and an environment with none of what `npm test` or the
 * developer's shell set: no NODE_OPTIONS, no `npm_*` variables, no folder of the repository on PATH.
 * The public registry stays reachable (jose); any @mandate/* package asked of a registry fails, so
 * what runs came from the Mandate service.
 */
export interface FreshMachine {
  /** The empty folder commands run in. */
  readonly cwd: string;
  readonly home: string;
  /** Its environment, for a program started there another way than `sh` (an MCP host spawning a server). */
  readonly env: Readonly<Record<string, string>>;
  /** `sh -c line` there, to its end (killed after 2 minutes). */
  sh(line: string): Promise<ShellRun>;
  remove(): void;
}

export interface ShellRun {
  line: string;
  code: number | null;
  stdout: string;
  stderr: string;
}

export const showShellRun = (r: ShellRun): string => `${r.line} -> exit ${r.code}\nstdout: ${r.stdout.trim()}\nstderr: ${r.stderr.trim()}`;

const inside = (dir: string, path: string): boolean => {
  const rel = relative(dir, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !rel.startsWith(sep));
};

export function freshMachine(): FreshMachine {
  const root = mkdtempSync(join(tmpdir(), 'mandate-fresh-machine-'));
  if (inside(REPO_ROOT, root)) throw new Error(`the temp folder ${root} is inside the repository`);
  const cwd = join(root, 'empty');
  const home = join(root, 'home');
  const cache = join(root, 'npm-cache');
  for (const dir of [cwd, home, cache]) mkdirSync(dir);

  const path = [dirname(process.execPath), ...(process.env['PATH'] ?? '').split(delimiter).filter((p) => p !== '' && !inside(REPO_ROOT, resolve(p)))];
  const env: Record<string, string> = {
    PATH: [...new Set(path)].join(delimiter),
    HOME: home,
    npm_config_cache: cache,
    // Registry, proxy and certificate settings of this machine's user, if any: how it reaches npm.
    npm_config_userconfig: process.env['npm_config_userconfig'] ?? join(homedir(), '.npmrc'),
    'npm_config_@mandate:registry': 'http://127.0.0.1:9/',
    npm_config_update_notifier: 'false',
  };
  for (const name of ['USER', 'LANG', 'TZ', 'npm_config_registry', 'HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy']) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }

  return {
    cwd,
    home,
    env,
    sh(line) {
      return new Promise((done) => {
        execFile('/bin/sh', ['-c', line], { cwd, env, timeout: 120_000 }, (error, stdout, stderr) => {
          done({ line, code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
        });
      });
    },
    remove() {
      rmSync(root, { recursive: true, force: true });
    },
  };
}

