import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './server-process.ts';

/**
 * A PostgreSQL server of the test's own, in a temp dir on a free port of 127.0.0.1, that the test
 * may stop and start while the service runs. (The machine's shared PostgreSQL serves the other test
 * files and must never be restarted.) Needs the server binaries (`initdb`, `pg_ctl`) of Debian's
 * postgresql package, found under /usr/lib/postgresql/<version>/bin or in PG_BIN_DIR. PostgreSQL
 * refuses to run as root: as root the commands run as the `postgres` user and the temp dir is
 * handed to it. When binaries or that user are missing this fails loudly; it never skips.
 */

const run = promisify(execFile);

export interface PgInstance {
  /** postgres://postgres@127.0.0.1:<port>/postgres (trust authentication). */
  url: string;
  port: number;
  /** Fast shutdown (`pg_ctl stop -m fast`): sessions are ended, running transactions rolled back. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it (immediately) and removes its files. */
  destroy(): Promise<void>;
}

function binDir(): string {
  const fromEnv = process.env.PG_BIN_DIR;
  if (fromEnv) {
    if (!existsSync(join(fromEnv, 'pg_ctl'))) throw new Error(`PG_BIN_DIR=${fromEnv} holds no pg_ctl`);
    return fromEnv;
  }
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))) : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (!newest) {
    throw new Error('PostgreSQL server binaries (initdb, pg_ctl) not found under /usr/lib/postgresql/*/bin: install the postgresql package or set PG_BIN_DIR. The database-restart test needs its own PostgreSQL instance.');
  }
  return join(root, newest, 'bin');
}

/** As root, the command runs as `postgres`; otherwise as the current user. */
function asOwner(file: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args];
}

function postgresUser(): { uid: number; gid: number } {
  try {
    return { uid: Number(execFileSync('id', ['-u', 'postgres']).toString().trim()), gid: Number(execFileSync('id', ['-g', 'postgres']).toString().trim()) };
  } catch {
    throw new Error('running as root, but there is no `postgres` user to run a PostgreSQL instance as (PostgreSQL refuses to run as root)');
  }
}

export async function startPgInstance(): Promise<PgInstance> {
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), 'mandate-pg-'));
  if (process.getuid?.() === 0) {
    const { uid, gid } = postgresUser();
    chownSync(dir, uid, gid);
  }
  const data = join(dir, 'data');
  const port = await freePort();
  const pgCtl = join(bin, 'pg_ctl');
  const exec = async (file: string, args: string[]) => {
    const [cmd, argv] = asOwner(file, args);
    try {
      await run(cmd, argv, { timeout: 60_000 });
    } catch (e) {
      const err = e as { stderr?: string; stdout?: string; message: string };
      throw new Error(`${file} ${args.join(' ')} failed: ${err.message}\n${err.stdout ?? ''}${err.stderr ?? ''}`, { cause: e });
    }
  };
  const startArgs = ['-D', data, '-l', join(dir, 'server.log'), '-w', '-t', '60', '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`, 'start'];
  // If the test process dies without cleaning up, the instance must not outlive it.
  const killOnExit = () => {
    try {
      const [cmd, argv] = asOwner(pgCtl, ['-D', data, '-m', 'immediate', 'stop']);
      execFileSync(cmd, argv, { stdio: 'ignore', timeout: 10_000 });
    } catch {
      // not running
    }
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', killOnExit);

  try {
    await exec(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    await exec(pgCtl, startArgs);
  } catch (e) {
    process.removeListener('exit', killOnExit);
    killOnExit();
    throw e;
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    stop: () => exec(pgCtl, ['-D', data, '-m', 'fast', '-w', '-t', '60', 'stop']),
    start: () => exec(pgCtl, startArgs),
    async destroy() {
      process.removeListener('exit', killOnExit);
      try {
        await exec(pgCtl, ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
