import { type LoadResult, combineRounds, runLoad } from '../lib/load.ts';
import { makeProofs } from '../lib/passes.ts';
import { type Proc, postgresCpuMs } from '../lib/processes.ts';
import { pinDatabaseBackends } from '../lib/isolation.ts';
import { SITE, SITE_URL, type BenchAgent } from '../lib/seed.ts';
import { type Row, ratio, rowOf } from '../lib/table.ts';

export interface LoadSettings {
  concurrency: number;
  /** Measured requests per scenario, over all rounds. */
  requests: number;
  warmup: number;
  /** Baseline and measured route take turns this many times; throughput is the median round. */
  rounds: number;
}

const isValid = (status: number, body: string): boolean => status === 200 && body.includes('"valid":true');

/** `n` verify bodies for GET SITE_URL with `pass`, each with a fresh proof (as a site sends them for one agent session). */
export async function verifyBodies(agent: BenchAgent, pass: string, n: number): Promise<string[]> {
  const proofs = await makeProofs(agent, pass, SITE_URL, n);
  return proofs.map((dpop) => JSON.stringify({ access_token: pass, dpop, method: 'GET', url: SITE_URL, site: SITE }));
}

/**
 * A Mandate process runs its first few tens of thousands of verifications slower than it runs for the
 * rest of its life (V8 compiles its request path, far longer than the bare route's, as it goes): in
 * one run of 16 rounds on a fresh process the first three measured 0.84, 0.72 and 0.67 x the
 * baseline, the others 0.71-0.87 (bench/README.md, "Steady state"). A service runs for days, so each
 * fresh process gets the same warm-up before its first round (`--process-warmup`): `requests`
 * verifications each, with fresh proofs, at `concurrency` in flight, nothing measured. A request not
 * answered `valid` stops the run: a warm-up that failed would have warmed an error path.
 */
export async function warmUp(o: { targets: readonly { proc: Proc; path: string }[]; agent: BenchAgent; pass: string; concurrency: number; requests: number }): Promise<void> {
  const chunk = 5000;
  for (let done = 0; done < o.requests; done += chunk) {
    const n = Math.min(chunk, o.requests - done);
    for (const { proc, path } of o.targets) {
      // Proofs of its own for each process: the Mandate processes of bench/ab.ts share one database.
      const bodies = await verifyBodies(o.agent, o.pass, n);
      const r = await runLoad({ origin: proc.origin, concurrency: o.concurrency, requests: n, warmup: 0, next: (i) => ({ method: 'POST', path, body: bodies[i] ?? '' }), ok: isValid });
      if (r.errors > 0) throw new Error(`${proc.name} warm-up: ${r.errors} of ${n} requests not valid, first: ${r.firstError ?? ''}`);
    }
  }
}

/** A phase of load on one process, with the CPU that process (and PostgreSQL) spent on it. */
export async function measured(proc: Proc, run: () => Promise<LoadResult>): Promise<{ result: LoadResult; cpuMs: number; dbCpuMs: number }> {
  pinDatabaseBackends();
  const before = proc.cpuMs();
  const dbBefore = postgresCpuMs();
  const result = await run();
  return { result, cpuMs: proc.cpuMs() - before, dbCpuMs: postgresCpuMs() - dbBefore };
}

type Side = { result: LoadResult; cpuUs: number; dbCpuUs: number };

/**
 * Rounds of `a` and `b` taking turns; each side's results combined, with CPU µs per request. The CPU
 * is that of the whole run, so it is divided by every request the server answered in it: the
 * measured ones and `warmupPerRound` unmeasured ones of each round (runLoad's `warmup`).
 */
export async function alternate(rounds: number, warmupPerRound: number, a: { proc: Proc; run: (round: number) => Promise<LoadResult> }, b: { proc: Proc; run: (round: number) => Promise<LoadResult> }) {
  const sides = [a, b].map(() => ({ results: [] as LoadResult[], cpuMs: 0, dbCpuMs: 0 }));
  for (let round = 0; round < rounds; round++) {
    for (const [k, side] of [a, b].entries()) {
      const m = await measured(side.proc, () => side.run(round));
      const acc = sides[k];
      if (acc) {
        acc.results.push(m.result);
        acc.cpuMs += m.cpuMs;
        acc.dbCpuMs += m.dbCpuMs;
      }
    }
  }
  return sides.map((s) => {
    const result = combineRounds(s.results);
    const answered = result.requests + rounds * warmupPerRound;
    return { result, cpuUs: (s.cpuMs * 1000) / answered, dbCpuUs: (s.dbCpuMs * 1000) / answered };
  }) as [Side, Side];
}

/**
 * Cloud verify under concurrent HTTP load beside its baseline, both driven by the same generator
 * with the same bodies: one pass for every request (as a site sees it from one agent session), a
 * fresh DPoP proof per request. Baseline and verify take turns for `rounds` rounds; the baseline
 * consumes nothing, so it is sent the very bodies verify gets next.
 */
export async function cloudVerifyRows(o: { mandate: Proc; baseline: Proc; agent: BenchAgent; pass: string; store: string; load: LoadSettings; label?: string }): Promise<Row[]> {
  const perRound = Math.ceil(o.load.requests / o.load.rounds);
  const n = o.load.warmup + perRound;
  const drive = (origin: string, path: string, bodies: readonly string[]) =>
    runLoad({ origin, concurrency: o.load.concurrency, requests: perRound, warmup: o.load.warmup, next: (i) => ({ method: 'POST', path, body: bodies[i] ?? '' }), ok: isValid });
  let bodies: string[] = [];
  const [base, verify] = await alternate(
    o.load.rounds,
    o.load.warmup,
    {
      proc: o.baseline,
      run: async () => {
        // Fresh proofs per round (iat stays well inside the 120 s window), made before the clock starts.
        bodies = await verifyBodies(o.agent, o.pass, n);
        return drive(o.baseline.origin, '/verify', bodies);
      },
    },
    { proc: o.mandate, run: () => drive(o.mandate.origin, '/api/v1/verify', bodies) },
  );
  for (const [name, r] of [['baseline', base.result], ['verify', verify.result]] as const) {
    if (r.firstError !== undefined) console.error(`${name}: ${r.errors} unexpected answers, first: ${r.firstError}`);
  }
  const inFlight = `, ${o.load.concurrency} in flight`;
  return [
    rowOf(`baseline: bare Fastify + 1 ES256 jwtVerify${inFlight}`, o.store, base.result, { rssMiB: o.baseline.rssMiB(), cpuUs: base.cpuUs }),
    rowOf(`${o.label ?? 'cloud verify POST /api/v1/verify'}${inFlight}`, o.store, verify.result, { rssMiB: o.mandate.rssMiB(), cpuUs: verify.cpuUs, ratio: ratio(verify.result, base.result), ...dbCpu(o.store, verify.dbCpuUs) }),
  ];
}

/** The PostgreSQL column, for PostgreSQL runs only. */
export const dbCpu = (store: string, us: number): { dbCpuUs?: number } => (store === 'postgres' ? { dbCpuUs: us } : {});
