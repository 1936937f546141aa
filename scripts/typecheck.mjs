#!/usr/bin/env node
// `npm run typecheck`: builds what the packages import from each other (`npm run build`), then checks
// every TypeScript project, two at a time (each `tsc` is mostly one thread; these machines have 2
// cores). Each project's output is printed whole when it ends. Exits 1 when the build or any check
// fails, after all checks have run.
import { spawn, spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
// The longest first, so the two lanes end together.
const PROJECTS = ['packages/server', 'packages/web', 'packages/site', 'bench', 'packages/agent', 'e2e', 'examples', 'packages/protocol'];
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
if (build.status !== 0) process.exit(1);

const failed = [];
function check(project) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const chunks = [];
    const child = spawn(process.execPath, [TSC, '-p', project], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (c) => chunks.push(c));
    child.stderr.on('data', (c) => chunks.push(c));
    child.on('close', (code) => {
      if (code !== 0) failed.push(project);
      process.stdout.write(`typecheck ${project}: ${code === 0 ? 'ok' : 'FAILED'} (${((Date.now() - t0) / 1000).toFixed(1)} s)\n${Buffer.concat(chunks).toString()}`);
      resolve();
    });
  });
}
const queue = [...PROJECTS];
const lane = async () => { for (let p = queue.shift(); p; p = queue.shift()) await check(p); };
await Promise.all([lane(), lane()]);
if (failed.length > 0) {
  process.stdout.write(`typecheck failed in: ${failed.join(', ')}\n`);
  process.exit(1);
}
