/**
 * What rebuilding a long revocation list costs the server's other requests (issue 14, item 1): the
 * server as its own process over a fresh store holding N entries (half blocked agents, half revoked
 * grants, as the scale runs seed them: lib/seed.ts), and in the benchmark process a client that
 * asks for `GET /api/healthz` every 10 ms on a fixed schedule (latency counted from the time the
 * request was due, so a stalled event loop shows in full). Each round has an idle phase (only the
 * pings: the baseline) and a rebuild phase (the pings, and meanwhile, one after the other: the
 * revocation counter moved as a revocation elsewhere would, then `GET /api/v1/revocation` in full,
 * which rebuilds, signs and sends the list). Also the CPU time of the server's main thread (the event
 * loop) per rebuild, from /proc, which the machine's other load does not inflate.
 *
 *   node --import tsx bench/revocation.ts --store both --entries 10k,30k --rounds 3
 *   node --import tsx bench/revocation.ts --before /tmp/before   # also a checkout of the previous version
 *
 * `--before DIR`: DIR is another checkout of the repository (with node_modules), e.g. the commit
 * before a change; each store and entry count then runs a server of each, taking turns round by
 * round in the same run. Not a test: nothing here asserts a time.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { seedRevocations } from './lib/seed.ts';
import { createBenchDb, type Backend, type RawSql } from './lib/stores.ts';
import { freePort, startMandate, statCpuMs, type Proc } from './lib/processes.ts';
import { percentile } from './lib/load.ts';

interface Options {
  stores: Backend[];
  entries: number[];
  rounds: number;
  phaseMs: number;
  before: string | undefined;
}

function parse(argv: readonly string[]): Options {
  const o: Options = { stores: ['sqlite', 'postgres'], entries: [10_000, 30_000], rounds: 3, phaseMs: 4_000, before: undefined };
  for (let i = 0; i < argv.length; i++) {
    const v = argv[i + 1] ?? '';
    switch (argv[i]) {
      case '--store': o.stores = v === 'both' ? ['sqlite', 'postgres'] : [v as Backend]; i++; break;
      case '--entries': o.entries = v.split(',').map((s) => Number(s.replace(/k$/i, '000'))); i++; break;
      case '--rounds': o.rounds = Number(v); i++; break;
      case '--phase-ms': o.phaseMs = Number(v); i++; break;
      case '--before': o.before = v; i++; break;
      default: throw new Error(`unknown option ${argv[i]} (--store sqlite|postgres|both, --entries 10k,30k, --rounds N, --phase-ms MS, --before DIR)`);
    }
  }
  if (!o.stores.every((s) => s === 'sqlite' || s === 'postgres') || !o.entries.every((n) => Number.isSafeInteger(n) && n > 0)) throw new Error('bad --store or --entries');
  return o;
}

/** CPU time (ms) of a process's main thread: its event loop. */
function mainThreadCpuMs(pid: number): number {
  return statCpuMs(readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8'));
}

/** Pings /api/healthz every 10 ms until `stop()`; the latencies (ms) counted from when each was due. */
function pinger(origin: string): { stop(): Promise<number[]> } {
  const latencies: number[] = [];
  const inflight = new Set<Promise<void>>();
  let running = true;
  const t0 = performance.now();
  const loop = (async () => {
    for (let k = 0; running; k++) {
      const due = t0 + k * 10;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const p = fetch(`${origin}/api/healthz`).then(async (r) => {
        await r.arrayBuffer();
        latencies.push(performance.now() - due);
      });
      inflight.add(p);
      void p.finally(() => inflight.delete(p));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      await Promise.all(inflight);
      return latencies.sort((a, b) => a - b);
    },
  };
}

interface Phase {
  healthz: number[];
  gets: number[];
  bytes: number;
  cpuMs: number;
}

async function phase(server: Proc, raw: RawSql, ms: number, rebuild: boolean): Promise<Phase> {
  const ping = pinger(server.origin);
  const gets: number[] = [];
  let bytes = 0;
  const cpu0 = mainThreadCpuMs(server.pid);
  const end = performance.now() + ms;
  if (rebuild) {
    while (performance.now() < end) {
      await raw.exec(`UPDATE counters SET value = value + 1 WHERE name = 'rev_seq'`);
      const s = performance.now();
      const res = await fetch(`${server.origin}/api/v1/revocation`);
      bytes = (await res.arrayBuffer()).byteLength;
      gets.push(performance.now() - s);
    }
  } else {
    await new Promise((r) => setTimeout(r, ms));
  }
  const cpuMs = mainThreadCpuMs(server.pid) - cpu0;
  return { healthz: await ping.stop(), gets: gets.sort((a, b) => a - b), bytes, cpuMs };
}

const fmt = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-');
const lat = (l: readonly number[]) => `${fmt(percentile(l, 0.5))} / ${fmt(percentile(l, 0.99))} / ${fmt(l[l.length - 1] ?? NaN)}`;

interface Running {
  name: string;
  server: Proc;
  raw: RawSql;
  stop(): Promise<void>;
}

/** A server of one variant over a fresh store, with `entries` revocation entries written into it. */
async function start(backend: Backend, entries: number, variant: { name: string; cwd: string | undefined }): Promise<Running> {
  const db = await createBenchDb(backend);
  let server: Proc | undefined;
  let raw: RawSql | undefined;
  try {
    const port = await freePort();
    server = await startMandate({ databaseUrl: db.databaseUrl, dataDir: db.dataDir, baseUrl: `http://localhost:${port}`, port, ...(variant.cwd ? { cwd: variant.cwd } : {}) });
    // Written into the running server's database (its own release migrated it).
    raw = await db.raw();
    await seedRevocations(raw, backend, { count: entries, now: Date.now() });
    if (backend === 'postgres') await raw.exec('ANALYZE');
    await (await fetch(`${server.origin}/api/v1/revocation`)).arrayBuffer();
  } catch (e) {
    await raw?.close();
    await server?.stop();
    await db.drop();
    throw e;
  }
  const s = server;
  const r = raw;
  return {
    name: variant.name,
    server: s,
    raw: r,
    async stop() {
      await r.close();
      await s.stop();
      await db.drop();
    },
  };
}

/** The variants' rows for one store and list size; the variants take turns round by round. */
async function measure(backend: Backend, entries: number, variants: readonly { name: string; cwd: string | undefined }[], o: Options): Promise<string[]> {
  const running: Running[] = [];
  try {
    for (const v of variants) running.push(await start(backend, entries, v));
    const acc = running.map(() => ({ idle: [] as number[], busy: [] as number[], gets: [] as number[], cpu: 0, bytes: 0 }));
    for (let r = 0; r < o.rounds; r++) {
      for (const [k, v] of running.entries()) {
        const a = acc[k];
        if (a === undefined) continue;
        a.idle.push(...(await phase(v.server, v.raw, o.phaseMs, false)).healthz);
        const p = await phase(v.server, v.raw, o.phaseMs, true);
        a.busy.push(...p.healthz);
        a.gets.push(...p.gets);
        a.cpu += p.cpuMs;
        a.bytes = p.bytes;
      }
    }
    return running.map((v, k) => {
      const a = acc[k] ?? { idle: [], busy: [], gets: [], cpu: 0, bytes: 0 };
      for (const l of [a.idle, a.busy, a.gets]) l.sort((x, y) => x - y);
      return `| ${v.name} | ${backend} | ${entries} | ${(a.bytes / 1048576).toFixed(2)} | ${a.gets.length} | ${fmt(percentile(a.gets, 0.5))} | ${fmt(a.cpu / Math.max(1, a.gets.length))} | ${lat(a.idle)} | ${lat(a.busy)} |`;
    });
  } finally {
    for (const v of running) await v.stop();
  }
}

const o = parse(process.argv.slice(2));
const variants = [{ name: 'now', cwd: undefined }, ...(o.before ? [{ name: 'before', cwd: o.before }] : [])];
const idleCpu = (() => {
  const f = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').split(/\s+/).slice(1).map(Number);
  return { idle: f[3] ?? 0, total: f.reduce((a, b) => a + b, 0) };
})();
console.log(`# Revocation list rebuilds\n\nnode ${process.version}, ${readdirSync('/sys/devices/system/cpu').filter((d) => /^cpu\d+$/.test(d)).length} CPUs, ${o.rounds} rounds of ${o.phaseMs} ms idle + ${o.phaseMs} ms rebuilding\n`);
console.log('| variant | store | entries | body MiB | rebuilds | GET p50 ms | event-loop CPU ms per rebuild | healthz p50 / p99 / max ms, idle (baseline) | healthz p50 / p99 / max ms, while rebuilding |');
console.log('|---|---|--:|--:|--:|--:|--:|--:|--:|');
for (const backend of o.stores) {
  for (const entries of o.entries) {
    for (const row of await measure(backend, entries, variants, o)) console.log(row);
  }
}
const f = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').split(/\s+/).slice(1).map(Number);
const total = f.reduce((a, b) => a + b, 0) - idleCpu.total;
console.log(`\nMachine idle during the run: ${(((f[3] ?? 0) - idleCpu.idle) / total * 100).toFixed(0)} % (other load makes the latencies noisy; the CPU column is not affected by it)`);
