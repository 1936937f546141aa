import { combineRounds, percentile, type LoadResult } from './load.ts';

/**
 * In-process throughput: `concurrency` callers, each awaiting `op` again as soon as it settled, as a
 * site's request handlers would. Returns the same shape as the HTTP load generator, so the tables
 * read alike; CPU is the whole process's (all threads) per operation.
 */
export async function runInProcess(o: { concurrency: number; ops: number; warmup: number; op: (i: number) => Promise<boolean> }): Promise<{ result: LoadResult; cpuUs: number }> {
  let cursor = 0;
  const drive = async (end: number, record: (ms: number, ok: boolean) => void) => {
    await Promise.all(Array.from({ length: o.concurrency }, async () => {
      for (let i = cursor++; i < end; i = cursor++) {
        const t0 = process.hrtime.bigint();
        let ok = false;
        try {
          ok = await o.op(i);
        } catch {
          ok = false;
        }
        record(Number(process.hrtime.bigint() - t0) / 1e6, ok);
      }
    }));
  };
  await drive(o.warmup, () => {});
  cursor = o.warmup;
  const latencies: number[] = [];
  let errors = 0;
  const cpu0 = process.cpuUsage();
  const start = process.hrtime.bigint();
  await drive(o.warmup + o.ops, (ms, ok) => {
    latencies.push(ms);
    if (!ok) errors++;
  });
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  latencies.sort((a, b) => a - b);
  const result: LoadResult = { requests: latencies.length, errors, seconds, perSec: latencies.length / seconds, p50Ms: percentile(latencies, 0.5), p99Ms: percentile(latencies, 0.99), latencies };
  return { result, cpuUs: (cpu.user + cpu.system) / latencies.length };
}

/** Rounds of several in-process scenarios taking turns; each combined (median throughput, pooled latencies, mean CPU). */
export async function alternateInProcess(rounds: number, scenarios: ReadonlyArray<(round: number) => Promise<{ result: LoadResult; cpuUs: number }>>) {
  const acc = scenarios.map(() => ({ results: [] as LoadResult[], cpu: [] as number[] }));
  for (let r = 0; r < rounds; r++) {
    for (const [k, run] of scenarios.entries()) {
      const m = await run(r);
      acc[k]?.results.push(m.result);
      acc[k]?.cpu.push(m.cpuUs);
    }
  }
  return acc.map((a) => ({ result: combineRounds(a.results), cpuUs: a.cpu.reduce((x, y) => x + y, 0) / a.cpu.length }));
}
