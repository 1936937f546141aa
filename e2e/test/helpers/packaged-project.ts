import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, relative, resolve, sep } from 'node:path';
import { REPO_ROOT } from '../../../packages/server/test/helpers/child-process.ts';

/**
 * A project outside the repository that uses the SDKs as an npm user gets them. It holds the
 * tarballs `scripts/pack-sdks.mjs` makes, and express from the registry (or npm's cache), installed
 * with npm. Every program in it runs with plain `node`: no tsx, no TypeScript, no NODE_OPTIONS. Each
 * one gets an environment of its own (`cleanEnv`), so nothing reaches into this checkout: no
 * `node_modules/.bin` of the repository on PATH, none of the `npm_*` variables `npm test` sets.
 */

/** No child may hang the suite: one still running after this is killed (and its exit code fails the test). */
const COMMAND_LIMIT_MS = 120_000;

export type Ran = { command: string; code: number | null; stdout: string; stderr: string };

/** One line per result, for assertion messages. */
export function showRan(r: Ran): string {
  return `${r.command} -> exit ${r.code}\nstdout: ${r.stdout.trim()}\nstderr: ${r.stderr.trim()}`;
}

/** A long-running program of the project (a site), with what it printed. */
export interface Program {
  readonly name: string;
  output(): string;
  /** Waits until the output contains `text`; fails when the program exits first or `ms` pass. */
  waitFor(text: string, ms?: number): Promise<void>;
  /** SIGTERM, then SIGKILL after 5 s. */
  stop(): Promise<void>;
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const p of live) p.kill('SIGKILL');
});

const inside = (dir: string, path: string): boolean => {
  const rel = relative(dir, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !rel.startsWith(sep));
};

/**
 * The environment of every program of the project: PATH with this Node's folder first and no folder
 * of the repository (`npm test` puts `node_modules/.bin` on it, where tsx lives), HOME and the
 * few variables npm needs to find its cache, registry and proxy, and `extra`. Nothing else.
 */
export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const path = [dirname(process.execPath), ...(process.env['PATH'] ?? '').split(delimiter).filter((p) => p !== '' && !inside(REPO_ROOT, resolve(p)))];
  const env: Record<string, string> = { PATH: [...new Set(path)].join(delimiter) };
  const keep = ['HOME', 'USER', 'LANG', 'TMPDIR', 'TZ', 'npm_config_cache', 'npm_config_registry', 'npm_config_userconfig', 'HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy'];
  for (const name of keep) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return { ...env, ...extra };
}

function spawnClean(command: string, args: string[], cwd: string, env: Record<string, string>) {
  const proc = spawn(command, args, { cwd, env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(proc);
  let stdout = '';
  let stderr = '';
  let out = '';
  proc.stdout?.on('data', (d: Buffer) => {
    stdout += d.toString();
    out += d.toString();
  });
  proc.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
    out += d.toString();
  });
  const exited = new Promise<number | null>((done) => {
    proc.once('error', (e) => {
      stderr += String(e);
      out += String(e);
    });
    // 'close', not 'exit': by then stdout and stderr are read to their end.
    proc.once('close', (code) => {
      live.delete(proc);
      done(code);
    });
  });
  const running = () => proc.exitCode === null && proc.signalCode === null;
  return { proc, exited, running, stdout: () => stdout, stderr: () => stderr, output: () => out };
}

export class PackagedProject {
  private constructor(
    /** The project: package.json, node_modules, the programs the tests write. */
    readonly dir: string,
    /** The tarballs it was installed from. */
    readonly tarballs: string[],
    private readonly root: string,
  ) {}

  /**
   * Packs @mandate/protocol, @mandate/site and @mandate/agent (`scripts/pack-sdks.mjs`, which builds
   * them first) into a temp folder, makes a fresh `{"type":"module"}` project beside it and installs
   * the tarballs and `dependencies` there with npm.
   */
  static async create(dependencies: string[]): Promise<PackagedProject> {
    const root = mkdtempSync(join(tmpdir(), 'mandate-packaged-'));
    try {
      const tarballDir = join(root, 'tarballs');
      const packed = await runIn(REPO_ROOT, process.execPath, [join(REPO_ROOT, 'scripts/pack-sdks.mjs'), tarballDir], {});
      if (packed.code !== 0) throw new Error(`packing failed: ${showRan(packed)}`);
      const tarballs = [...packed.stdout.matchAll(/^\s+(\S+\.tgz)$/gm)].map((m) => m[1] ?? '').filter((f, i, all) => all.indexOf(f) === i);
      if (tarballs.length !== 3) throw new Error(`expected 3 tarballs: ${showRan(packed)}`);

      const dir = join(root, 'project');
      mkdirSync(dir);
      writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name: 'mandate-packaged-test', type: 'module', private: true }, null, 2)}\n`);
      const installed = await runIn(dir, 'npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', ...tarballs, ...dependencies], {});
      if (installed.code !== 0) throw new Error(`npm install failed: ${showRan(installed)}`);
      return new PackagedProject(dir, tarballs, root);
    } catch (e) {
      rmSync(root, { recursive: true, force: true });
      throw e;
    }
  }

  /** Writes a file of the project (relative path). */
  write(file: string, text: string): string {
    const path = join(this.dir, file);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
    return path;
  }

  /** The installed `package.json` of a package. */
  installedManifest(name: string): { name: string; version: string } {
    return JSON.parse(readFileSync(join(this.dir, 'node_modules', name, 'package.json'), 'utf8')) as { name: string; version: string };
  }

  /** `node <file> <args>` in the project, to its end. */
  node(file: string, args: string[] = [], env: Record<string, string> = {}): Promise<Ran> {
    return runIn(this.dir, process.execPath, [file, ...args], env);
  }

  /**
   * `npx <args>` in the project (e.g. `mandate-agent whoami`), to its end. `--no`: a bin missing
   * from the project fails here instead of being fetched from the registry.
   */
  npx(args: string[], env: Record<string, string> = {}): Promise<Ran> {
    return runIn(this.dir, 'npx', ['--no', '--', ...args], env, `npx ${args.join(' ')}`);
  }

  /** Any command (e.g. the repository's tsc) with the project's clean environment, to its end. */
  run(command: string, args: string[], cwd = this.dir): Promise<Ran> {
    return runIn(cwd, command, args, {});
  }

  /** Starts `node <file>` in the project: a program that keeps running (a site). */
  start(name: string, file: string, env: Record<string, string>): Program {
    const child = spawnClean(process.execPath, [file], this.dir, env);
    return {
      name,
      output: child.output,
      async waitFor(text, ms = 30_000) {
        const deadline = Date.now() + ms;
        while (!child.output().includes(text)) {
          if (!child.running()) throw new Error(`${name} exited (${child.proc.exitCode ?? child.proc.signalCode}) before printing "${text}":\n${child.output()}`);
          if (Date.now() > deadline) throw new Error(`${name} did not print "${text}" within ${ms} ms:\n${child.output()}`);
          await new Promise((r) => setTimeout(r, 50));
        }
      },
      async stop() {
        if (child.running()) {
          child.proc.kill('SIGTERM');
          const timer = setTimeout(() => child.proc.kill('SIGKILL'), 5000);
          await child.exited;
          clearTimeout(timer);
        }
      },
    };
  }

  /** A new folder beside the project (an agent's directory, created with mode 700). */
  tempDir(prefix: string): string {
    return mkdtempSync(join(this.root, prefix));
  }

  remove(): void {
    rmSync(this.root, { recursive: true, force: true });
  }
}

async function runIn(cwd: string, command: string, args: string[], env: Record<string, string>, shown = `${command} ${args.join(' ')}`): Promise<Ran> {
  const child = spawnClean(command, args, cwd, env);
  const limit = setTimeout(() => child.proc.kill('SIGKILL'), COMMAND_LIMIT_MS);
  const code = await child.exited;
  clearTimeout(limit);
  return { command: shown, code, stdout: child.stdout(), stderr: child.stderr() };
}

/**
 * The JavaScript examples of a README: each ```js block right after a line `<!-- example: <file> -->`,
 * by file name, exactly as npm shows them.
 */
export function readmeExamples(readme: string): Map<string, string> {
  const text = readFileSync(readme, 'utf8');
  return new Map([...text.matchAll(/<!-- example: ([\w.-]+\.m?js) -->\n```js\n([\s\S]*?)```/g)].map((m) => [m[1] ?? '', m[2] ?? '']));
}
