/**
 * The revocation event stream (decisions §30): from the owner's revoke to every one of N connected
 * stream clients having the delta (N = 1,000, one node, SQLite), p50/p99 over the clients and rounds,
 * and the server's memory per 1,000 open streams (RSS delta). Beside a baseline measured in the same
 * run: a bare node:http SSE fan-out (a POST writes one event to all its streams; no database, no
 * signing), the floor for pushing one event to N sockets on this machine. Before the stream, local
 * verifiers learned of a revocation at their next poll: up to rev_ttl, 60 s.
 *
 *   node --import tsx bench/suites/revocation-stream.ts --clients 1000 --rounds 10
 *
 * Not a test: nothing here asserts a time.
 */
import { createServer, type ServerResponse } from 'node:http';
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { readFileSync } from 'node:fs';
import { HttpOwner, remoteAgent, type RemoteAgent } from '../../packages/server/test/helpers/over-http.ts';
import { SseClient } from '../../packages/server/test/helpers/sse-client.ts';
import { createBenchDb } from '../lib/stores.ts';
import { ensureServerBuilt, freePort, startMandate } from '../lib/processes.ts';
import { percentile } from '../lib/load.ts';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? dflt : Number(process.argv[i + 1]);
};

/** The baseline server, when this file runs as the child process: streams on GET, one event to all on POST. */
function baselineServer(): void {
  const streams = new Set<ServerResponse>();
  let seq = 0;
  const server = createServer((req, res) => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
      res.write(`event: snapshot\nid: ${seq}\ndata: {}\n\n`);
      streams.add(res);
      res.on('close', () => streams.delete(res));
      return;
    }
    seq++;
    const text = `event: delta\nid: ${seq}\ndata: ${'x'.repeat(400)}\n\n`;
    for (const s of streams) s.write(text);
    res.end();
  });
  server.listen(Number(process.env.PORT), '127.0.0.1', () => process.send?.('ready'));
}

const rssMiB = (pid: number): number => Number((readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/) ?? [])[1]) / 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, check: () => boolean, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(2);
  }
}

interface Figures { latencies: number[]; rssPer1000: number }

/** Opens `n` streams to `url`, then per round: `fire()`, and the time until every stream has the next delta. */
async function measure(url: string, pid: number, n: number, rounds: number, fire: (round: number) => Promise<void>): Promise<Figures> {
  await sleep(500);
  const before = rssMiB(pid);
  const clients = Array.from({ length: n }, () => new SseClient(url));
  await until('every snapshot', () => clients.every((c) => c.named('snapshot').length === 1));
  await sleep(1000);
  const rssPer1000 = ((rssMiB(pid) - before) * 1000) / n;
  const latencies: number[] = [];
  try {
    for (let r = 0; r < rounds; r++) {
      const seen = clients.map((c) => c.named('delta').length);
      const t0 = performance.now();
      await fire(r);
      await until(`round ${r}'s delta at every client`, () => clients.every((c, i) => c.named('delta').length > (seen[i] ?? 0)));
      for (const [i, c] of clients.entries()) latencies.push((c.named('delta')[seen[i] ?? 0]?.at ?? NaN) - t0);
      await sleep(200);
    }
  } finally {
    for (const c of clients) c.close();
  }
  return { latencies: latencies.sort((a, b) => a - b), rssPer1000 };
}

async function main(): Promise<void> {
  const n = arg('clients', 1000);
  const rounds = arg('rounds', 10);
  // Baseline: the bare fan-out in a process of its own.
  const basePort = await freePort();
  const child = fork(fileURLToPath(import.meta.url), ['--baseline-server'], { env: { ...process.env, PORT: String(basePort) }, execArgv: ['--import', 'tsx'] });
  await new Promise((r) => child.once('message', r));
  const base = await measure(`http://127.0.0.1:${basePort}/`, child.pid ?? 0, n, rounds, async () => { await fetch(`http://127.0.0.1:${basePort}/`, { method: 'POST' }); });
  child.kill();

  ensureServerBuilt();
  const db = await createBenchDb('sqlite');
  const port = await freePort();
  const baseUrl = `http://localhost:${port}`;
  const server = await startMandate({ databaseUrl: db.databaseUrl, dataDir: db.dataDir, baseUrl, port, build: 'dist' });
  try {
    const node = { url: server.origin };
    const owner = await HttpOwner.signUp(node, baseUrl, { label: 'bench' });
    const agents: RemoteAgent[] = [];
    for (let r = 0; r < rounds; r++) agents.push(await remoteAgent(node, owner, `agent ${r}`));
    const mandate = await measure(`${server.origin}/api/v1/revocation/events`, server.pid, n, rounds, async (r) => {
      const a = agents[r];
      if (a) await owner.flag(a.id, 'revoked');
    });
    const row = (name: string, f: Figures) => `| ${name} | ${percentile(f.latencies, 0.5).toFixed(1)} | ${percentile(f.latencies, 0.99).toFixed(1)} | ${percentile(f.latencies, 1).toFixed(1)} | ${f.rssPer1000.toFixed(1)} |`;
    console.log(`\nRevocation stream: ${n} clients, ${rounds} rounds (node ${process.version})\n`);
    console.log('| server | revoke to delta at every client p50 (ms) | p99 (ms) | max (ms) | RSS per 1,000 streams (MiB) |');
    console.log('|---|---|---|---|---|');
    console.log(row('bare node:http SSE fan-out (baseline)', base));
    console.log(row('Mandate GET /api/v1/revocation/events (SQLite)', mandate));
    console.log('| polling GET /api/v1/revocation (before) | up to 60 000 (rev_ttl) | | | |');
  } finally {
    await server.stop();
    await db.drop();
  }
}

if (process.argv.includes('--baseline-server')) baselineServer();
else await main();
