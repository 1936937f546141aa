/**
 * The revocation event stream (decisions §30): from the owner's revoke to every one of N connected
 * stream clients having the delta (N = 1,000 by default, 10,000 for the target of §30; one node,
 * SQLite), p50/p99 over the clients and rounds, and the server's memory with the N streams open (RSS
 * delta, in all and per 1,000; Mandate's heap and external memory from its /metrics). Beside a
 * baseline measured in the same run: a bare node:http SSE fan-out (a POST writes one event to all its
 * streams; no database, no signing), the floor for pushing one event to N sockets on this machine.
 * Before the stream, local verifiers learned of a revocation at their next poll: up to rev_ttl, 60 s.
 *
 *   node --import tsx bench/suites/revocation-stream.ts --clients 1000 --rounds 10
 *   node --import tsx bench/suites/revocation-stream.ts --clients 10000 --rounds 5
 *
 * The clients run in `--client-procs` processes (default: one per 2,500 streams), forked from this
 * file, so that one event loop parsing every stream does not set the figures; each stamps arrivals
 * with the wall clock (performance.timeOrigin + now(), shared by the processes of one machine).
 * Every stream is a file descriptor in the server: `ulimit -n` must be above N (checked first; raise
 * it in the shell, the processes started here inherit it).
 *
 * Not a test: nothing here asserts a time. */
import { createServer, type ServerResponse } from 'node:http';
import { type ChildProcess, fork } from 'node:child_process';
import { loadavg } from 'node:os';
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
/** Wall-clock time in ms with sub-ms resolution, comparable between the processes of this machine. */
const wallMs = () => performance.timeOrigin + performance.now();

async function until(what: string, check: () => boolean, ms = 120_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

/** What the main process asks of a client process, and what each answers when done. */
type ToClients = { open: string; count: number } | { mark: true } | { collect: true } | { close: true };
type FromClients = { opened: true; failed: number } | { marked: true } | { arrivals: number[] } | { closed: true };

/**
 * A client process: `count` SSE clients of `url` (opened in steps of CONNECT_STEP, each step once all
 * its clients are answered, so the server's accept queue does not overflow into SYN retries), then,
 * per round, `mark` (the deltas each has now) and `collect` (the wall-clock arrival of the next delta
 * at every one of them).
 */
const CONNECT_STEP = 250;
function clientProcess(): void {
  let clients: SseClient[] = [];
  let seen: number[] = [];
  const send = (m: FromClients) => process.send?.(m);
  process.on('message', (m: ToClients) => {
    void (async () => {
      if ('open' in m) {
        for (let i = 0; i < m.count; i += CONNECT_STEP) {
          const step = Array.from({ length: Math.min(CONNECT_STEP, m.count - i) }, () => new SseClient(m.open));
          clients.push(...step);
          await until('a step of streams answered', () => step.every((c) => c.status !== 0 || c.ended));
        }
        await until('every snapshot', () => clients.every((c) => c.named('snapshot').length === 1 || c.ended));
        send({ opened: true, failed: clients.filter((c) => c.ended || c.status !== 200).length });
      } else if ('mark' in m) {
        seen = clients.map((c) => c.named('delta').length);
        send({ marked: true });
      } else if ('collect' in m) {
        await until('the delta at every client', () => clients.every((c, i) => c.named('delta').length > (seen[i] ?? 0)));
        send({ arrivals: clients.map((c, i) => performance.timeOrigin + (c.named('delta')[seen[i] ?? 0]?.at ?? NaN)) });
      } else {
        for (const c of clients) c.close();
        clients = [];
        send({ closed: true });
        process.disconnect();
      }
    })().catch((e: unknown) => {
      console.error(e);
      process.exit(1);
    });
  });
}

/** The client processes, each asked the same thing and answering once. */
class ClientProcesses {
  private readonly children: ChildProcess[];
  constructor(count: number) {
    this.children = Array.from({ length: count }, () => fork(fileURLToPath(import.meta.url), ['--sse-clients'], { execArgv: ['--import', 'tsx'] }));
  }
  /** Sends one message to every process (`each(i)`), resolves with their answers. */
  ask(each: (i: number) => ToClients): Promise<FromClients[]> {
    return Promise.all(this.children.map((c, i) => new Promise<FromClients>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`a client process exited (${code})`));
      c.once('exit', onExit);
      c.once('message', (m: FromClients) => {
        c.off('exit', onExit);
        resolve(m);
      });
      c.send(each(i));
    })));
  }
  get size(): number {
    return this.children.length;
  }
  kill(): void {
    for (const c of this.children) if (c.exitCode === null) c.kill();
  }
}

interface Figures { latencies: number[]; rssBefore: number; rssDelta: number; failed: number; extra?: string }

/**
 * Opens `n` streams to `url` from `procs` client processes, then per round: `fire()`, and the time
 * until every stream has the next delta. `probe` (optional) is read before and after opening (the
 * server's own heap figures).
 */
async function measure(url: string, pid: number, n: number, rounds: number, procs: number, fire: (round: number) => Promise<void>, probe?: () => Promise<Record<string, number>>): Promise<Figures> {
  const clients = new ClientProcesses(procs);
  try {
    await sleep(1000);
    const rssBefore = rssMiB(pid);
    const probedBefore = await probe?.();
    const opened = await clients.ask((i) => ({ open: url, count: Math.floor(n / procs) + (i < n % procs ? 1 : 0) }));
    const failed = opened.reduce((sum, m) => sum + ('failed' in m ? m.failed : 0), 0);
    await sleep(2000);
    const rssDelta = rssMiB(pid) - rssBefore;
    const probedAfter = await probe?.();
    const extra = probedBefore && probedAfter ? Object.entries(probedAfter).map(([k, v]) => `${k} +${((v - (probedBefore[k] ?? 0)) / 1048576).toFixed(1)} MiB`).join(', ') : undefined;
    const latencies: number[] = [];
    for (let r = 0; r < rounds; r++) {
      await clients.ask(() => ({ mark: true }));
      const t0 = wallMs();
      await fire(r);
      const answers = await clients.ask(() => ({ collect: true }));
      for (const a of answers) if ('arrivals' in a) latencies.push(...a.arrivals.map((t) => t - t0));
      await sleep(500);
    }
    await clients.ask(() => ({ close: true }));
    return { latencies: latencies.sort((a, b) => a - b), rssBefore, rssDelta, failed, ...(extra ? { extra } : {}) };
  } finally {
    clients.kill();
  }
}

/** The open-file limit of this process (its children inherit it): each stream is a descriptor at the server and one at a client. */
function openFileLimit(): number {
  const line = readFileSync('/proc/self/limits', 'utf8').split('\n').find((l) => l.startsWith('Max open files')) ?? '';
  return Number(line.split(/\s+/)[3]);
}

async function main(): Promise<void> {
  const n = arg('clients', 1000);
  const rounds = arg('rounds', 10);
  // Several client processes past a few thousand streams: one event loop parsing 10,000 streams
  // would be the slowest part of every figure.
  const procs = arg('client-procs', Math.max(1, Math.ceil(n / 2500)));
  const limit = openFileLimit();
  // The server holds n descriptors, each client process n / procs, plus their files and the database.
  if (limit < n + 200) throw new Error(`ulimit -n is ${limit}: ${n} streams need more than ${n + 200} descriptors in the server process (raise it in the shell first: ulimit -n ${n * 2})`);
  // Baseline: the bare fan-out in a process of its own.
  const basePort = await freePort();
  const child = fork(fileURLToPath(import.meta.url), ['--baseline-server'], { env: { ...process.env, PORT: String(basePort) }, execArgv: ['--import', 'tsx'] });
  await new Promise((r) => child.once('message', r));
  let base: Figures;
  try {
    base = await measure(`http://127.0.0.1:${basePort}/`, child.pid ?? 0, n, rounds, procs, async () => { await fetch(`http://127.0.0.1:${basePort}/`, { method: 'POST' }); });
  } finally {
    child.kill();
  }

  ensureServerBuilt();
  const db = await createBenchDb('sqlite');
  const port = await freePort();
  const metricsPort = await freePort();
  const baseUrl = `http://localhost:${port}`;
  // Every client process connects from 127.0.0.1: one address, whose share of the node's streams
  // (REVOCATION_MAX_STREAMS_PER_ADDRESS, 1,000 by default) would refuse all but 1,000 of them.
  const server = await startMandate({ databaseUrl: db.databaseUrl, dataDir: db.dataDir, baseUrl, port, build: 'dist', env: { METRICS_PORT: String(metricsPort), REVOCATION_MAX_STREAMS_PER_ADDRESS: '1000000' } });
  try {
    const node = { url: server.origin };
    const owner = await HttpOwner.signUp(node, baseUrl, { label: 'bench' });
    const agents: RemoteAgent[] = [];
    for (let r = 0; r < rounds; r++) agents.push(await remoteAgent(node, owner, `agent ${r}`));
    // The server's heap and the memory outside it (Buffers: socket writes waiting, the shared events), from its /metrics.
    const heap = async () => {
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      const value = (name: string) => Number(text.split('\n').find((l) => l.startsWith(`${name} `))?.split(' ')[1] ?? NaN);
      return { 'heap used': value('mandate_nodejs_heap_size_used_bytes'), external: value('mandate_nodejs_external_memory_bytes') };
    };
    const mandate = await measure(`${server.origin}/api/v1/revocation/events`, server.pid, n, rounds, procs, async (r) => {
      const a = agents[r];
      if (a) await owner.flag(a.id, 'revoked');
    }, heap);
    for (const [name, f] of [['baseline', base], ['Mandate', mandate]] as const) {
      if (f.failed > 0) throw new Error(`${name}: ${f.failed} of ${n} streams did not open`);
    }
    const row = (name: string, f: Figures) => `| ${name} | ${percentile(f.latencies, 0.5).toFixed(1)} | ${percentile(f.latencies, 0.99).toFixed(1)} | ${percentile(f.latencies, 1).toFixed(1)} | ${f.rssDelta.toFixed(1)} | ${((f.rssDelta * 1000) / n).toFixed(1)} |`;
    console.log(`\nRevocation stream: ${n} clients in ${procs} client process${procs > 1 ? 'es' : ''}, ${rounds} rounds (node ${process.version}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')})\n`);
    console.log('| server | revoke to delta at every client p50 (ms) | p99 (ms) | max (ms) | RSS delta with the streams open (MiB) | per 1,000 streams (MiB) |');
    console.log('|---|---|---|---|---|---|');
    console.log(row('bare node:http SSE fan-out (baseline)', base));
    console.log(row('Mandate GET /api/v1/revocation/events (SQLite)', mandate));
    console.log('| polling GET /api/v1/revocation (before) | up to 60 000 (rev_ttl) | | | | |');
    console.log(`\nRSS before the streams: baseline ${base.rssBefore.toFixed(1)} MiB, Mandate ${mandate.rssBefore.toFixed(1)} MiB. Mandate with the streams open: ${mandate.extra ?? 'no /metrics'}.`);
  } finally {
    await server.stop();
    await db.drop();
  }
}

if (process.argv.includes('--baseline-server')) baselineServer();
else if (process.argv.includes('--sse-clients')) clientProcess();
else await main();
