import { Agent, request } from 'node:http';

/**
 * A small closed-loop HTTP load generator: `concurrency` workers, each sending its next request as
 * soon as the previous answer arrived, over keep-alive connections (one per worker). The same
 * generator drives the baselines and the measured routes, so their figures compare.
 */

export interface LoadRequest {
  method: 'GET' | 'POST';
  path: string;
  /** A body, already serialised: JSON unless `headers` names another `content-type` (lower case). */
  body?: string;
  headers?: Record<string, string>;
  /** Anything the caller wants back in `ok` (e.g. which agent the request was for). */
  tag?: number;
}

export interface LoadOptions {
  /** http://host:port */
  origin: string;
  concurrency: number;
  /** Requests measured. */
  requests: number;
  /** Requests sent first and not measured (JIT, caches, connection set-up). */
  warmup: number;
  /**
   * The i-th request (0-based over warm-up and measured requests together), sent by `worker`
   * (0 .. concurrency-1); a worker sends its next request only after the answer to its last one.
   */
  next: (i: number, worker: number) => LoadRequest;
  /** Whether an answer is the expected one; anything else counts as an error. */
  ok: (status: number, body: string, request: LoadRequest) => boolean;
}

export interface LoadResult {
  requests: number;
  errors: number;
  seconds: number;
  perSec: number;
  p50Ms: number;
  p99Ms: number;
  /** The first unexpected answer, to show why a run failed. */
  firstError?: string;
  /** Every measured latency, sorted (ms): rounds are pooled from these. */
  latencies: number[];
  /** After combineRounds: each round's throughput, in the order run. */
  roundRates?: number[];
}

export async function runLoad(o: LoadOptions): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: o.concurrency });
  try {
    let cursor = 0;
    await phase(o, agent, () => (cursor < o.warmup ? cursor++ : -1), () => {});
    const latencies: number[] = [];
    let errors = 0;
    let firstError: string | undefined;
    const end = o.warmup + o.requests;
    const start = process.hrtime.bigint();
    await phase(o, agent, () => (cursor < end ? cursor++ : -1), (ms, good, why) => {
      latencies.push(ms);
      if (!good) {
        errors++;
        firstError ??= why;
      }
    });
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    latencies.sort((a, b) => a - b);
    return {
      requests: latencies.length,
      errors,
      seconds,
      perSec: latencies.length / seconds,
      p50Ms: percentile(latencies, 0.5),
      p99Ms: percentile(latencies, 0.99),
      latencies,
      ...(firstError === undefined ? {} : { firstError }),
    };
  } finally {
    agent.destroy();
  }
}

type Record_ = (ms: number, good: boolean, why: string) => void;

async function phase(o: LoadOptions, agent: Agent, take: () => number, record: Record_): Promise<void> {
  const worker = async (w: number) => {
    for (let i = take(); i >= 0; i = take()) {
      const req = o.next(i, w);
      const t0 = process.hrtime.bigint();
      let status = 0;
      let body = '';
      try {
        ({ status, body } = await send(o.origin, agent, req));
      } catch (e) {
        body = e instanceof Error ? e.message : String(e);
      }
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      const good = o.ok(status, body, req);
      record(ms, good, `${status} ${body.slice(0, 300)}`);
    }
  };
  await Promise.all(Array.from({ length: o.concurrency }, (_, w) => worker(w)));
}

function send(origin: string, agent: Agent, r: LoadRequest): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...r.headers };
    if (r.body !== undefined) {
      headers['content-type'] ??= 'application/json';
      headers['content-length'] = Buffer.byteLength(r.body);
    }
    const req = request(`${origin}${r.path}`, { method: r.method, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(r.body);
  });
}

export function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[idx] ?? NaN;
}

/**
 * Several rounds of one scenario as one result: throughput is the median of the rounds (a round
 * slowed by a neighbour on a shared machine does not drag it down), latencies are pooled.
 */
export function combineRounds(rounds: readonly LoadResult[]): LoadResult {
  const latencies = rounds.flatMap((r) => r.latencies).sort((a, b) => a - b);
  const rates = rounds.map((r) => r.perSec).sort((a, b) => a - b);
  const firstError = rounds.find((r) => r.firstError !== undefined)?.firstError;
  return {
    requests: latencies.length,
    errors: rounds.reduce((n, r) => n + r.errors, 0),
    seconds: rounds.reduce((n, r) => n + r.seconds, 0),
    perSec: median(rates),
    roundRates: rounds.map((r) => r.perSec),
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    latencies,
    ...(firstError === undefined ? {} : { firstError }),
  };
}

export function median(sorted: readonly number[]): number {
  if (sorted.length === 0) return NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? NaN) : ((sorted[mid - 1] ?? NaN) + (sorted[mid] ?? NaN)) / 2;
}
