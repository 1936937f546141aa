#!/usr/bin/env node
// `npm test` after the typecheck: every package's test files, in groups, two at a time.
//   node scripts/run-tests.mjs
//   MANDATE_TEST_LANES=N        N groups at a time (default 2; 1: one after another)
//   MANDATE_TEST_GROUP_FILES=N  files per group (default 8; 1: a process per file, as `npm test -w <package>`)
// A group is one process running several files of a package (scripts/test-group.mjs): a process per
// file paid Node's start, the TypeScript loader and the code under test again for every file, about
// 3 s of CPU each, a third of the suite's CPU. Groups run from one queue on two lanes (these machines
// have 2 cores and each file runs its tests one at a time: they start service processes and
// browsers), so both lanes end at about the same time. The server's resilience files (nodes killed
// and restarted, a PostgreSQL of their own restarted: 1.5-2 minutes) come first, before any long
// load test. Every test file picks its own free ports and PostgreSQL database, so concurrent groups
// share nothing but the machine. Each group's output is printed whole when it ends (never
// interleaved), with a line a minute saying what is still running; what failed is printed again
// before the summary. Exits 1 when any group fails, after all have run.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const GROUP_RUNNER = join(ROOT, 'scripts', 'test-group.mjs');
/** Each package and its folder, in the summary's order. */
const PACKAGES = new Map([
  ['@mandate/protocol', 'packages/protocol'],
  ['@mandate/site', 'packages/site'],
  ['@mandate/agent', 'packages/agent'],
  ['@mandate/web', 'packages/web'],
  ['@mandate/server', 'packages/server'],
  ['@mandate/e2e', 'e2e'],
]);
const GROUP_FILES = Math.max(1, Number(process.env.MANDATE_TEST_GROUP_FILES ?? 8) || 8);
const LANE_COUNT = Math.max(1, Number(process.env.MANDATE_TEST_LANES ?? 2) || 2);

/** A package's test files, relative to it, in the order its `npm test` runs them: `test/*.test.ts`, then `test/<folder>/*.test.ts`. */
function testFiles(dir) {
  const testDir = join(ROOT, dir, 'test');
  if (!existsSync(testDir)) return [];
  const entries = readdirSync(testDir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
  const top = entries.filter((e) => e.isFile() && e.name.endsWith('.test.ts')).map((e) => `test/${e.name}`);
  const nested = entries.filter((e) => e.isDirectory()).flatMap((d) => readdirSync(join(testDir, d.name)).filter((f) => f.endsWith('.test.ts')).sort().map((f) => `test/${d.name}/${f}`));
  return [...top, ...nested];
}

function chunks(list, size) {
  const out = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}

/** The groups of some of a package's files, named after it and the files they hold. */
function groupsOf(pkg, files) {
  return chunks(files, GROUP_FILES).map((group) => ({
    pkg,
    dir: PACKAGES.get(pkg),
    files: group,
    name: `${pkg} ${group.length === 1 ? group[0] : `${group[0]} .. ${group.at(-1)}`}`,
  }));
}

const byPackage = new Map([...PACKAGES].map(([pkg, dir]) => [pkg, testFiles(dir)]));
const isResilience = (f) => f.startsWith('test/resilience/');
const serverFiles = byPackage.get('@mandate/server');
// The queue: the resilience files first; then the packages whose files are long (browsers, whole
// journeys), the server's many groups, and the quick protocol files last to fill the lanes' ends.
const QUEUE = [
  ...groupsOf('@mandate/server', serverFiles.filter(isResilience)),
  ...['@mandate/e2e', '@mandate/web', '@mandate/agent', '@mandate/site'].flatMap((pkg) => groupsOf(pkg, byPackage.get(pkg))),
  ...groupsOf('@mandate/server', serverFiles.filter((f) => !isResilience(f))),
  ...groupsOf('@mandate/protocol', byPackage.get('@mandate/protocol')),
];

const started = Date.now();
const running = new Map(); // group name -> start time
const results = []; // { group, ok, seconds, tests, failures }

const minutes = (ms) => `${(ms / 60_000).toFixed(1)} min`;

/**
 * What failed in a group's output, to print again before the summary: a CI log often keeps only its
 * end. The spec reporter lists its failing tests, with their errors, after `✖ failing tests:`; without
 * that list (a crash), the output's last lines.
 */
function failureExcerpt(output) {
  const lines = output.split('\n');
  const start = lines.findIndex((l) => l.includes('failing tests:'));
  return (start >= 0 ? lines.slice(start, start + 150) : lines.slice(-60)).join('\n');
}

/** Runs one group in its own process, holding its output until it ends. */
function runGroup(group) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    running.set(group.name, t0);
    const outputParts = [];
    const child = spawn(process.execPath, ['--import', 'tsx', '--test-reporter=spec', GROUP_RUNNER, ...group.files], { cwd: join(ROOT, group.dir), stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
    child.stdout.on('data', (c) => outputParts.push(c));
    child.stderr.on('data', (c) => outputParts.push(c));
    child.on('close', (code, signal) => {
      running.delete(group.name);
      const output = Buffer.concat(outputParts).toString();
      const seconds = Math.round((Date.now() - t0) / 1000);
      const tests = Number(/^ℹ tests (\d+)/m.exec(output)?.[1] ?? 0);
      const ok = code === 0;
      process.stdout.write(`\n===== ${group.name}: ${ok ? 'passed' : `FAILED (${signal ?? `exit ${code}`})`}, ${tests} tests, ${seconds} s =====\n`);
      process.stdout.write(output);
      results.push({ group, ok, seconds, tests, failures: ok ? '' : failureExcerpt(output) });
      resolve();
    });
  });
}

async function runLane() {
  for (let group = QUEUE.shift(); group; group = QUEUE.shift()) await runGroup(group);
}

const heartbeat = setInterval(() => {
  const now = Date.now();
  const list = [...running].map(([g, t]) => `${g} (${minutes(now - t)})`).join(', ');
  process.stdout.write(`[tests ${minutes(now - started)}] running: ${list || 'nothing'}; ${QUEUE.length} groups waiting\n`);
}, 60_000);

await Promise.all(Array.from({ length: LANE_COUNT }, runLane));
clearInterval(heartbeat);

for (const r of results.filter((x) => !x.ok)) process.stdout.write(`\n===== what failed in ${r.group.name} =====\n${r.failures}\n`);
process.stdout.write(`\n===== summary (${minutes(Date.now() - started)}) =====\n`);
for (const pkg of PACKAGES.keys()) {
  const mine = results.filter((r) => r.group.pkg === pkg);
  const failed = mine.filter((r) => !r.ok).length;
  const tests = mine.reduce((n, r) => n + r.tests, 0);
  const seconds = mine.reduce((n, r) => n + r.seconds, 0);
  process.stdout.write(`${failed ? 'FAIL' : 'ok  '} ${pkg}: ${tests} tests in ${mine.length} groups, ${seconds} s${failed ? `, ${failed} groups failed` : ''}\n`);
}
process.exit(results.every((r) => r.ok) ? 0 : 1);
