#!/usr/bin/env node
// `npm test` after the typecheck: every package's test suite, in two lanes at once.
//   node scripts/run-tests.mjs            (MANDATE_TEST_LANES=1 runs them one after another)
// The server's suite is about as long as all the others together, and each suite runs its files one
// at a time (they start service processes and browsers), so on a 2-core machine one lane leaves a
// core idle for most of the run. Lane 1 runs the server's suite but its resilience files; lane 2 those
// first (nodes killed and restarted, PostgreSQL restarted: 1.5-2 minutes, at the start, where no
// long-running load test of lane 1 is near), then the other packages in order. Each part's output is
// printed whole when it ends (never interleaved), with a line a minute saying what is still running.
// Every test file picks its own free ports and PostgreSQL database, so the lanes share nothing but the
// machine. Exits 1 when any part fails, after both lanes have finished.
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SERVER = join(dirname(fileURLToPath(import.meta.url)), '..', 'packages', 'server');
/**
 * The server's test files, in the order its `npm test` runs them (`test/*.test.ts`, then
 * `test/<folder>/*.test.ts`), relative to the package.
 */
function serverTestFiles() {
  const entries = readdirSync(join(SERVER, 'test'), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
  const top = entries.filter((e) => e.isFile() && e.name.endsWith('.test.ts')).map((e) => `test/${e.name}`);
  const nested = entries.filter((e) => e.isDirectory()).flatMap((d) => readdirSync(join(SERVER, 'test', d.name)).filter((f) => f.endsWith('.test.ts')).sort().map((f) => `test/${d.name}/${f}`));
  return [...top, ...nested];
}
const isResilience = (f) => f.startsWith('test/resilience/');
/** Part of the server's suite, run as its `npm test` runs its files (`test:files`: the same command, given the files). */
const serverPart = (name, files) => ({ name, command: 'npm', args: ['run', 'test:files', '-w', '@mandate/server', '--', ...files] });
const workspace = (name) => ({ name, command: 'npm', args: ['test', '-w', name] });

const serverFiles = serverTestFiles();
const LANES = process.env.MANDATE_TEST_LANES === '1'
  ? [['@mandate/protocol', '@mandate/site', '@mandate/agent', '@mandate/web', '@mandate/server', '@mandate/e2e'].map(workspace)]
  : [
      [serverPart('@mandate/server', serverFiles.filter((f) => !isResilience(f)))],
      [serverPart('@mandate/server resilience', serverFiles.filter(isResilience)), ...['@mandate/protocol', '@mandate/site', '@mandate/agent', '@mandate/web', '@mandate/e2e'].map(workspace)],
    ];

const started = Date.now();
const running = new Map(); // part -> start time
const results = []; // { part, ok, seconds, tests }

const minutes = (ms) => `${(ms / 60_000).toFixed(1)} min`;

/** Runs one part (a workspace's `npm test`, or files of the server's suite), holding its output until it ends. */
function runSuite(part) {
  const name = part.name;
  return new Promise((resolve) => {
    const t0 = Date.now();
    running.set(name, t0);
    const chunks = [];
    const child = spawn(part.command, part.args, { stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
    child.stdout.on('data', (c) => chunks.push(c));
    child.stderr.on('data', (c) => chunks.push(c));
    child.on('close', (code, signal) => {
      running.delete(name);
      const output = Buffer.concat(chunks).toString();
      const seconds = Math.round((Date.now() - t0) / 1000);
      const tests = /^ℹ tests (\d+)/m.exec(output)?.[1] ?? '?';
      const ok = code === 0;
      process.stdout.write(`\n===== ${name}: ${ok ? 'passed' : `FAILED (${signal ?? `exit ${code}`})`}, ${tests} tests, ${seconds} s =====\n`);
      process.stdout.write(output);
      results.push({ part: name, ok, seconds, tests });
      resolve();
    });
  });
}

async function runLane(parts) {
  for (const part of parts) await runSuite(part);
}

const heartbeat = setInterval(() => {
  const now = Date.now();
  const list = [...running].map(([w, t]) => `${w} (${minutes(now - t)})`).join(', ');
  process.stdout.write(`[tests ${minutes(now - started)}] running: ${list || 'nothing'}\n`);
}, 60_000);

await Promise.all(LANES.map(runLane));
clearInterval(heartbeat);

process.stdout.write(`\n===== summary (${minutes(Date.now() - started)}) =====\n`);
for (const r of results) process.stdout.write(`${r.ok ? 'ok  ' : 'FAIL'} ${r.part}: ${r.tests} tests, ${r.seconds} s\n`);
process.exit(results.every((r) => r.ok) ? 0 : 1);
