/**
 * Start-up time and memory of the service (issue 15, item 2), each way of starting it measured in the
 * same run, taking turns round by round:
 *
 * - `sources under tsx`: `node --import tsx packages/server/src/main.ts`, what `npm start` ran before the
 *   build (tsx transpiles each file on first load; its cache in the temp folder is warm after round 1);
 * - `npm start (scripts/start.mjs)`: the build-staleness check, then the built `dist/main.js` in the same
 *   process (npm's own start-up, the same for both, is left out);
 * - `dist/main.js`: the built service alone.
 *
 * Each variant has its own SQLite data folder, made by one start before the measured rounds (so no
 * round pays for migrations or key generation). Per start: the time from spawning the process until
 * `GET /api/healthz` first answers 200 (polled every 5 ms), the CPU time the process used until then
 * (all its threads, from /proc), and its resident memory then (VmRSS) and at its peak (VmHWM).
 *
 *   node --import tsx bench/startup.ts --rounds 7
 *
 * Not a test: nothing here asserts a time.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { freePort, statCpuMs } from './lib/processes.ts';
import { median as medianOfSorted } from './lib/load.ts';

const median = (xs: readonly number[]): number => medianOfSorted([...xs].sort((a, b) => a - b));

const ROOT = fileURLToPath(new URL('../', import.meta.url));

interface Variant {
  name: string;
  args: string[];
  dataDir: string;
}

interface Sample {
  readyMs: number;
  cpuMs: number;
  rssMiB: number;
  peakMiB: number;
}

const rounds = Number(process.argv[process.argv.indexOf('--rounds') + 1] || 7);

function statusMiB(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

async function startOnce(v: Variant): Promise<Sample> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), HOST: '127.0.0.1', BASE_URL: `http://localhost:${port}`, DATA_DIR: v.dataDir, LOG_LEVEL: 'warn' };
  delete env['NODE_OPTIONS'];
  const t0 = performance.now();
  const child: ChildProcess = spawn(process.execPath, v.args, { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${v.name} exited (${child.exitCode}) before it answered:\n${stderr}`);
      if (performance.now() - t0 > 120_000) throw new Error(`${v.name} did not answer within 120 s:\n${stderr}`);
      const ok = await fetch(`http://127.0.0.1:${port}/api/healthz`).then((r) => r.ok, () => false);
      if (ok) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    const readyMs = performance.now() - t0;
    const pid = child.pid as number;
    return { readyMs, cpuMs: statCpuMs(readFileSync(`/proc/${pid}/stat`, 'utf8')), rssMiB: statusMiB(pid, 'VmRSS'), peakMiB: statusMiB(pid, 'VmHWM') };
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

async function main(): Promise<void> {
  // The build must be current before anything is measured: npm start would otherwise build in round 1.
  const build = spawnSync(process.execPath, ['-e', "import('./scripts/build-if-stale.mjs').then((m) => m.ensureBuilt())"], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('the build failed');
  const dir = (name: string) => mkdtempSync(join(tmpdir(), `mandate-startup-${name}-`));
  const variants: Variant[] = [
    { name: 'sources under tsx (before)', args: ['--import', 'tsx', 'packages/server/src/main.ts'], dataDir: dir('tsx') },
    { name: 'npm start: scripts/start.mjs (after)', args: ['scripts/start.mjs'], dataDir: dir('start') },
    { name: 'dist/main.js alone (after)', args: ['packages/server/dist/main.js'], dataDir: dir('dist') },
  ];
  try {
    for (const v of variants) await startOnce(v); // data folder, migrations, signing key; tsx's cache
    const samples = new Map<Variant, Sample[]>(variants.map((v) => [v, []]));
    for (let round = 0; round < rounds; round++) {
      // Turns rotate, so no variant always follows the same one.
      for (let k = 0; k < variants.length; k++) {
        const v = variants[(round + k) % variants.length] as Variant;
        samples.get(v)?.push(await startOnce(v));
      }
      process.stderr.write(`round ${round + 1}/${rounds} done\n`);
    }
    const base = median((samples.get(variants[0] as Variant) ?? []).map((s) => s.readyMs));
    const fmt = (xs: number[], digits = 0) => `${median(xs).toFixed(digits)} (${Math.min(...xs).toFixed(digits)}-${Math.max(...xs).toFixed(digits)})`;
    const lines = [
      `\n### Start-up, SQLite, ${rounds} rounds (median, range)\n`,
      '| how it starts | ready ms | CPU ms until ready | RSS MiB at ready | peak RSS MiB | ready time vs before |',
      '|---|--:|--:|--:|--:|--:|',
      ...variants.map((v) => {
        const s = samples.get(v) ?? [];
        return `| ${v.name} | ${fmt(s.map((x) => x.readyMs))} | ${fmt(s.map((x) => x.cpuMs))} | ${fmt(s.map((x) => x.rssMiB), 1)} | ${fmt(s.map((x) => x.peakMiB), 1)} | ${(median(s.map((x) => x.readyMs)) / base).toFixed(2)}x |`;
      }),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    for (const v of variants) rmSync(v.dataDir, { recursive: true, force: true });
  }
}

await main();
