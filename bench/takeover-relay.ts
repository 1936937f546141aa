/**
 * The take-over relay under load (issue 25): N concurrent take-over sessions, each agent streaming
 * frames of ~50 kB at F frames/s to its owner through one Mandate node, beside a bare `ws` relay
 * (bench/lib/bare-ws-relay.ts) driven by the same load generator in the same run.
 *
 *   node --import tsx bench/takeover-relay.ts [--sessions 1000] [--fps 10] [--kb 50] [--seconds 10]
 *       [--warmup 3] [--rounds 3] [--store sqlite|postgres] [--other DIR] [--sources] [--quick]
 *
 * Mandate runs as `npm start` runs it: its build (packages/server/dist/main.js, made current first)
 * with plain node; `--sources` runs the TypeScript under tsx instead (more heap: tsx, sources, maps).
 * Each round is a fresh relay process: bare relay, then Mandate (sessions opened with
 * `POST /api/v1/takeover`, one agent each), taking turns. The load generator is this process
 * (bench/lib/relay-load.ts): N agent sockets and N owner sockets. Per round and as the median of the
 * rounds: frames the agents' screens made, sent, and relayed per second, the ratio to the bare round
 * just before, latency from the agent's send to the owner's arrival (p50, p99), frames the relay
 * dropped (sent, never arrived), frames the agents skipped (their socket backed up), the relay's CPU
 * per frame relayed (all threads of the server and of its child processes, /proc: Mandate relays from
 * a relay process of its own, TAKEOVER_RELAY=process, whose share is shown apart), and its RSS growth
 * per session: once connected (before
 * any frame) and at the end of the window under load. Nothing here asserts a time; what it measures
 * and the figures are in bench/README.md ("Take-over relay").
 */
import { cpus, loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import { TAKEOVERS_PER_HOUR } from '../packages/server/src/domain/takeovers/takeovers.ts';
import { median } from './lib/load.ts';
import { ensureServerBuilt, freePort, startMandate, startProcess, type Proc, type ServerBuild } from './lib/processes.ts';
import { RelaySessions, type LoadShape, type RelayEnds, type RelayFigures } from './lib/relay-load.ts';
import { createBenchDb, type Backend } from './lib/stores.ts';
import { fmt, markdownTable } from './lib/table.ts';
import { bareRelayEnds, openTakeovers, seedTakeoverAgents } from './lib/takeover-sessions.ts';

export interface TakeoverRelayOptions {
  sessions: number;
  fps: number;
  kb: number;
  seconds: number;
  warmup: number;
  rounds: number;
  store: Backend;
  /** Another checkout of the repository whose Mandate server is also measured each round (a change's before or after). */
  other: string | undefined;
  /** `dist` (default): the built server as `npm start` runs it; `sources`: under tsx. */
  build: ServerBuild;
  /** Each round also measures Mandate relaying in its own process (TAKEOVER_RELAY=inline). */
  inline: boolean;
}

/** 'bare ws', 'Mandate', or 'Mandate (<other checkout>)'. */
type Relay = string;
const BARE = 'bare ws';

interface Round extends RelayFigures {
  relay: Relay;
  round: number;
  /** CPU of the relay process (all threads) per frame relayed in the window, µs. */
  relayCpuUs: number;
  /** The relay process's CPU in the window, in % of one core. */
  relayCpuPct: number;
  /** Of it, the CPU of the server's child processes (Mandate's relay process), in % of one core. */
  childCpuPct: number;
  /** Its CPU with every socket connected and no frame sent (2 s), in % of one core: work that is not relaying. */
  idleCpuPct: number;
  rssIdleMiB: number;
  kibPerSessionConnected: number;
  kibPerSessionLoaded: number;
  /** Owner sockets the relay had not closed 60 s after their agent left. */
  unclosed: number;
}

const USAGE = `node --import tsx bench/takeover-relay.ts [options]
  --sessions N    concurrent take-over sessions (default 1000; one agent and one owner socket each)
  --fps N         frames per second per agent (default 10)
  --kb N          frame size in kB before base64 (default 50)
  --seconds N     measured window per round (default 10)
  --warmup N      seconds of load before the window, unmeasured (default 3)
  --rounds N      bare relay and Mandate take turns N times (default 3, at most ${TAKEOVERS_PER_HOUR}: take-overs per agent per hour)
  --store S       sqlite or postgres (default sqlite)
  --other DIR     each round also measures the Mandate server of another checkout DIR (with its node_modules)
  --inline        each round also measures Mandate relaying in its own process (TAKEOVER_RELAY=inline)
  --sources       run Mandate's TypeScript sources under tsx instead of the build (packages/server/dist/main.js)
  --quick         smoke run: --sessions 100 --seconds 5 --warmup 2 --rounds 2`;

export function parseTakeoverRelayArgs(argv: readonly string[]): TakeoverRelayOptions {
  const o: TakeoverRelayOptions = { sessions: 1000, fps: 10, kb: 50, seconds: 10, warmup: 3, rounds: 3, store: 'sqlite', other: undefined, build: 'dist', inline: false };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const int = (min: number, max: number): number => {
      const n = Number(argv[++i]);
      if (!Number.isSafeInteger(n) || n < min || n > max) throw new Error(`${flag} takes an integer from ${min} to ${max}\n${USAGE}`);
      return n;
    };
    switch (flag) {
      case '--sessions': o.sessions = int(1, 100_000); break;
      case '--fps': o.fps = int(1, 100); break;
      case '--kb': o.kb = int(1, 3000); break;
      case '--seconds': o.seconds = int(1, 3600); break;
      case '--warmup': o.warmup = int(0, 600); break;
      case '--rounds': o.rounds = int(1, TAKEOVERS_PER_HOUR); break;
      case '--store': {
        const v = argv[++i];
        if (v !== 'sqlite' && v !== 'postgres') throw new Error(`--store is sqlite or postgres\n${USAGE}`);
        o.store = v;
        break;
      }
      case '--other': {
        const v = argv[++i];
        if (!v) throw new Error(`--other needs a directory\n${USAGE}`);
        o.other = v;
        break;
      }
      case '--sources': o.build = 'sources'; break;
      case '--inline': o.inline = true; break;
      case '--quick': Object.assign(o, { sessions: 100, seconds: 5, warmup: 2, rounds: 2 }); break;
      case '--help': case '-h': throw new Error(USAGE);
      default: throw new Error(`unknown option ${flag}\n${USAGE}`);
    }
  }
  return o;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const log = (line: string): void => void process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);

/** Connects the sessions to a started relay, runs the load, closes them; RSS read after a rest each time. */
async function measure(proc: Proc, relay: Relay, round: number, ends: RelayEnds[], shape: LoadShape): Promise<Round> {
  await sleep(1000);
  const rssIdleMiB = proc.rssMiB();
  const sessions = await RelaySessions.connect(ends);
  const idle0 = proc.cpuMs();
  await sleep(2000);
  const idleCpuPct = ((proc.cpuMs() - idle0) / 2000) * 100;
  const rssConnected = proc.rssMiB();
  let cpu0 = NaN;
  let cpu1 = NaN;
  let child0 = NaN;
  let child1 = NaN;
  let rssLoaded = NaN;
  const figures = await sessions.run(shape, {
    atWindowStart: () => {
      child0 = proc.childCpuMs();
      cpu0 = proc.cpuMs();
    },
    atWindowEnd: () => {
      cpu1 = proc.cpuMs();
      child1 = proc.childCpuMs();
      rssLoaded = proc.rssMiB();
    },
  });
  const unclosed = await sessions.close();
  const perSession = (mib: number) => ((mib - rssIdleMiB) * 1024) / ends.length;
  const r: Round = {
    ...figures,
    relay,
    round,
    relayCpuUs: ((cpu1 - cpu0) * 1000) / Math.max(1, figures.relayedPerSec * figures.windowSec),
    relayCpuPct: ((cpu1 - cpu0) / (figures.windowSec * 1000)) * 100,
    childCpuPct: ((child1 - child0) / (figures.windowSec * 1000)) * 100,
    idleCpuPct,
    rssIdleMiB,
    kibPerSessionConnected: perSession(rssConnected),
    kibPerSessionLoaded: perSession(rssLoaded),
    unclosed,
  };
  log(`round ${round} ${relay}: ${r.relayedPerSec.toFixed(0)} frames/s relayed of ${r.offeredPerSec.toFixed(0)} sent (${r.targetPerSec.toFixed(0)} made), p99 ${r.p99Ms.toFixed(0)} ms, CPU ${r.relayCpuPct.toFixed(0)} %, ${r.kibPerSessionConnected.toFixed(1)} KiB/session${r.errors + unclosed > 0 ? `, ${r.errors + unclosed} errors: ${r.firstError ?? `${unclosed} owners not closed`}` : ''}`);
  return r;
}

const HEAD = ['round', 'relay', 'made/s', 'sent/s', 'relayed/s', 'ratio', 'p50 ms', 'p99 ms', 'dropped', 'skipped', 'late', 'relay CPU µs/frame', 'relay CPU %', 'of which relay process %', 'idle CPU %', 'load gen CPU µs/frame', 'idle RSS MiB', 'KiB/session connected', 'KiB/session under load', 'errors'];
const NUMERIC = new Set([2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);

function cells(round: string, r: Omit<Round, 'round' | 'firstError'>, ratio: string): string[] {
  return [round, r.relay, fmt(r.targetPerSec, 0), fmt(r.offeredPerSec, 0), fmt(r.relayedPerSec, 0), ratio, fmt(r.p50Ms, 1), fmt(r.p99Ms, 1), fmt(r.dropped, 0), fmt(r.skipped, 0), fmt(r.late, 0), fmt(r.relayCpuUs, 0), fmt(r.relayCpuPct, 0), fmt(r.childCpuPct, 0), fmt(r.idleCpuPct, 1), fmt(r.generatorCpuUs, 0), fmt(r.rssIdleMiB, 0), fmt(r.kibPerSessionConnected, 1), fmt(r.kibPerSessionLoaded, 1), String(r.errors + r.unclosed)];
}

/** The median of every figure over the rounds of one relay (counts summed). */
function medianOf(relay: Relay, rs: readonly Round[]): Omit<Round, 'round' | 'firstError'> {
  const m = (f: (r: Round) => number) => median(rs.map(f).sort((a, b) => a - b));
  const sum = (f: (r: Round) => number) => rs.reduce((n, r) => n + f(r), 0);
  return {
    relay, targetPerSec: m((r) => r.targetPerSec), offeredPerSec: m((r) => r.offeredPerSec), relayedPerSec: m((r) => r.relayedPerSec),
    p50Ms: m((r) => r.p50Ms), p99Ms: m((r) => r.p99Ms), dropped: m((r) => r.dropped), skipped: m((r) => r.skipped), late: m((r) => r.late),
    generatorCpuUs: m((r) => r.generatorCpuUs), windowSec: m((r) => r.windowSec), relayCpuUs: m((r) => r.relayCpuUs), relayCpuPct: m((r) => r.relayCpuPct), childCpuPct: m((r) => r.childCpuPct), idleCpuPct: m((r) => r.idleCpuPct),
    rssIdleMiB: m((r) => r.rssIdleMiB), kibPerSessionConnected: m((r) => r.kibPerSessionConnected), kibPerSessionLoaded: m((r) => r.kibPerSessionLoaded),
    errors: sum((r) => r.errors), unclosed: sum((r) => r.unclosed),
  };
}

export async function takeoverRelay(o: TakeoverRelayOptions): Promise<string> {
  const shape: LoadShape = { fps: o.fps, frameBytes: o.kb * 1024, warmupSec: o.warmup, seconds: o.seconds };
  const machine = `${cpus().length} CPUs (${cpus()[0]?.model.trim() ?? '?'}), Node ${process.version}`;
  const loadBefore = loadavg()[0] ?? NaN;
  log(`seeding ${o.sessions} agents (${o.store})`);
  const db = await createBenchDb(o.store);
  const rounds: Round[] = [];
  try {
    const store = await db.openStore();
    const agents = await seedTakeoverAgents(store, o.sessions, Date.now());
    await store.close();
    const variants: { relay: Relay; cwd: string | undefined; env?: Record<string, string> }[] = [{ relay: 'Mandate', cwd: undefined }];
    if (o.inline) variants.push({ relay: 'Mandate (inline)', cwd: undefined, env: { TAKEOVER_RELAY: 'inline' } });
    if (o.other !== undefined) variants.push({ relay: `Mandate (${o.other})`, cwd: o.other });
    if (o.rounds * variants.length > TAKEOVERS_PER_HOUR) throw new Error(`${o.rounds} rounds of ${variants.length} Mandate variants open more take-overs per agent than the ${TAKEOVERS_PER_HOUR} an hour allows`);
    if (o.build === 'dist') for (const v of [...new Set(variants.map((x) => x.cwd))]) ensureServerBuilt(v);
    for (let round = 1; round <= o.rounds; round++) {
      const barePort = await freePort();
      const bare = await startProcess({ name: BARE, script: 'bench/lib/bare-ws-relay.ts', port: barePort, healthPath: '/healthz', env: { PORT: String(barePort) } });
      try {
        rounds.push(await measure(bare, BARE, round, bareRelayEnds(bare.origin, o.sessions), shape));
      } finally {
        await bare.stop();
      }
      for (const v of variants) {
        const port = await freePort();
        const mandate = await startMandate({ name: v.relay, databaseUrl: db.databaseUrl, dataDir: db.dataDir, baseUrl: `http://localhost:${port}`, port, build: o.build, ...(v.cwd === undefined ? {} : { cwd: v.cwd }), ...(v.env ? { env: v.env } : {}) });
        try {
          const ends = await openTakeovers(mandate.origin, agents);
          rounds.push(await measure(mandate, v.relay, round, ends, shape));
        } finally {
          await mandate.stop();
        }
      }
    }
  } finally {
    await db.drop();
  }

  const bare = rounds.filter((r) => r.relay === BARE);
  const relays = [...new Set(rounds.map((r) => r.relay))].filter((r) => r !== BARE);
  /** Each round of `relay` over the bare round before it, by `f`: the median and the range. */
  const paired = (relay: Relay, f: (r: Round, base: Round) => number): { median: number; low: number; high: number; each: Map<Round, number> } => {
    const each = new Map<Round, number>();
    for (const r of rounds) if (r.relay === relay) each.set(r, f(r, bare[r.round - 1]!));
    const xs = [...each.values()].sort((a, b) => a - b);
    return { median: median(xs), low: xs[0] ?? NaN, high: xs.at(-1) ?? NaN, each };
  };
  const throughput = new Map(relays.map((relay) => [relay, paired(relay, (r, b) => r.relayedPerSec / b.relayedPerSec)]));
  const body = rounds.map((r) => cells(String(r.round), r, r.relay === BARE ? '' : `${fmt(throughput.get(r.relay)?.each.get(r) ?? NaN, 2)} x bare`));
  body.push(cells('median', medianOf(BARE, bare), ''));
  for (const relay of relays) {
    const t = throughput.get(relay)!;
    body.push(cells('median', medianOf(relay, rounds.filter((r) => r.relay === relay)), `**${fmt(t.median, 2)} x bare** (rounds ${fmt(t.low, 2)}-${fmt(t.high, 2)})`));
  }
  // On a shared machine each process gets what CPU it can: its CPU per frame says what a core of its own would relay.
  const cpuLines = relays.map((relay) => {
    const c = paired(relay, (r, b) => b.relayCpuUs / r.relayCpuUs);
    const mine = median(rounds.filter((r) => r.relay === relay).map((r) => r.relayCpuUs).sort((a, b) => a - b));
    return `${relay}: ${fmt(mine, 0)} µs of CPU per frame relayed against the bare relay's ${fmt(median(bare.map((r) => r.relayCpuUs).sort((a, b) => a - b)), 0)} µs: bound by its CPU, it relays **${fmt(c.median, 2)} x** the bare relay's frames (rounds ${fmt(c.low, 2)}-${fmt(c.high, 2)}).`;
  });
  const firstErrors = rounds.filter((r) => r.firstError !== undefined).map((r) => `- round ${r.round} ${r.relay}: ${r.firstError}`);
  return [
    markdownTable(`take-over relay: ${o.sessions} sessions, ${o.fps} frames/s of ${o.kb} kB each (${o.store}, Mandate from ${o.build === 'dist' ? 'its build' : 'sources under tsx'}), ${o.seconds} s window after ${o.warmup} s, ${o.rounds} rounds`, HEAD, body, NUMERIC),
    '',
    ...cpuLines,
    '',
    `${machine}; load average ${loadBefore.toFixed(1)} before, ${(loadavg()[0] ?? NaN).toFixed(1)} after.`,
    'made/s: frames the agents\' screens produced (sessions x fps); sent/s: frames the agents sent; relayed/s: frames that reached the owners; dropped: frames sent in the window that never arrived (the relay drops a frame while 1 MiB is unsent to its owner); skipped: not sent, the agent\'s socket had 512 KiB unsent; late: not sent, the load generator came to the session after a newer frame was due (it is saturated too); idle CPU: the relay\'s with every socket connected and no frame (timers, housekeeping); KiB/session: the relay\'s RSS growth over N, once connected (before any frame) and at the end of the window.',
    ...firstErrors,
  ].join('\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(await takeoverRelay(parseTakeoverRelayArgs(process.argv.slice(2))));
}
