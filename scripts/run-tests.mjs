#!/usr/bin/env node
// `npm test` after the typecheck: every package's test suite, in two lanes at once.
//   node scripts/run-tests.mjs            (MANDATE_TEST_LANES=1 runs them one after another)
// The server's suite is about as long as all the others together, and each suite runs its files one
// at a time (they start service processes and browsers), so on a 2-core machine one lane leaves a
// core idle for most of the run. Lane 1 runs the server's suite; lane 2 the others, in order. Each
// suite's output is printed whole when it ends (never interleaved), with a line a minute saying what
// is still running. Every test file picks its own free ports and PostgreSQL database, so the lanes
// share nothing but the machine. Exits 1 when any suite fails, after both lanes have finished.
import { spawn } from 'node:child_process';

const LANES = process.env.MANDATE_TEST_LANES === '1'
  ? [['@mandate/protocol', '@mandate/site', '@mandate/agent', '@mandate/web', '@mandate/server', '@mandate/e2e']]
  : [['@mandate/server'], ['@mandate/protocol', '@mandate/site', '@mandate/agent', '@mandate/web', '@mandate/e2e']];

const started = Date.now();
const running = new Map(); // workspace -> start time
const results = []; // { workspace, ok, seconds, tests }

const minutes = (ms) => `${(ms / 60_000).toFixed(1)} min`;

/** Runs one workspace's `npm test`, holding its output until it ends. */
function runSuite(workspace) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    running.set(workspace, t0);
    const chunks = [];
    const child = spawn('npm', ['test', '-w', workspace], { stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
    child.stdout.on('data', (c) => chunks.push(c));
    child.stderr.on('data', (c) => chunks.push(c));
    child.on('close', (code, signal) => {
      running.delete(workspace);
      const output = Buffer.concat(chunks).toString();
      const seconds = Math.round((Date.now() - t0) / 1000);
      const tests = /^ℹ tests (\d+)/m.exec(output)?.[1] ?? '?';
      const ok = code === 0;
      process.stdout.write(`\n===== ${workspace}: ${ok ? 'passed' : `FAILED (${signal ?? `exit ${code}`})`}, ${tests} tests, ${seconds} s =====\n`);
      process.stdout.write(output);
      results.push({ workspace, ok, seconds, tests });
      resolve();
    });
  });
}

async function runLane(workspaces) {
  for (const w of workspaces) await runSuite(w);
}

const heartbeat = setInterval(() => {
  const now = Date.now();
  const list = [...running].map(([w, t]) => `${w} (${minutes(now - t)})`).join(', ');
  process.stdout.write(`[tests ${minutes(now - started)}] running: ${list || 'nothing'}\n`);
}, 60_000);

await Promise.all(LANES.map(runLane));
clearInterval(heartbeat);

process.stdout.write(`\n===== summary (${minutes(Date.now() - started)}) =====\n`);
for (const r of results) process.stdout.write(`${r.ok ? 'ok  ' : 'FAIL'} ${r.workspace}: ${r.tests} tests, ${r.seconds} s\n`);
process.exit(results.every((r) => r.ok) ? 0 : 1);
