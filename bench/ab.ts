/**
 * A/B comparison of server variants for cloud verify: one store, one baseline, and one Mandate process
 * per variant (same store, same BASE_URL, each with its own environment), taking turns round by round.
 * Variants: `name[@checkout]:ENV=value,...` (`@checkout`: another checkout of the repository with its own
 * node_modules, e.g. a `git worktree` of the commit before a change; `BUILD=dist` among a variant's settings
 * runs its build as `npm start` does instead of its sources under tsx). Usage (bench/README.md):
 *   node --import tsx bench/ab.ts --store sqlite --rounds 12 --requests 3000 --concurrency 128 now: before@/tmp/before:
 * Each process first gets `--process-warmup` unmeasured verifications (default 20000; 0: none).
 * Prints each variant's median ratio to the baseline, and the CPU per verification of the server's
 * event loop, its other threads and the load generator, with how idle the machine was.
 */
import { decodeProtectedHeader, type JWK } from 'jose';
import { createBenchDb, type Backend } from './lib/stores.ts';
import { ensureServerBuilt, freePort, postgresCpuMs, startBaseline, startMandate, threadCpuMs, type Proc, type ServerBuild } from './lib/processes.ts';
import { SITE, seedAgents, seedOwner } from './lib/seed.ts';
import { fetchPass } from './lib/passes.ts';
import { median, runLoad } from './lib/load.ts';
import { measured, verifyBodies, warmUp } from './suites/cloud-verify.ts';
import { readFileSync } from 'node:fs';

/** [idle ticks, all ticks] of the whole machine, from /proc/stat. */
function machineIdle(): [number, number] {
  const f = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').split(/\s+/).slice(1).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  return [f[3] ?? 0, total];
}

const argv = process.argv.slice(2);
const opt = (name: string, def: string) => {
  const i = argv.indexOf(name);
  if (i < 0) return def;
  const v = argv[i + 1] ?? def;
  argv.splice(i, 2);
  return v;
};
const backend = opt('--store', 'sqlite') as Backend;
const rounds = Number(opt('--rounds', '8'));
const requests = Number(opt('--requests', '3000'));
const concurrency = Number(opt('--concurrency', '32'));
// As the suite's --process-warmup: unmeasured verifications on each fresh process before round 0.
const processWarmup = Number(opt('--process-warmup', '20000'));
const variants = argv.map((a) => {
  const [nameAt, ...envs] = a.split(':');
  const [name, cwd] = (nameAt ?? a).split('@');
  const env: Record<string, string> = {};
  for (const kv of envs.join(':').split(',').filter(Boolean)) {
    // At the first `=` only: a value may hold more (PGOPTIONS=-c name=value).
    const eq = kv.indexOf('=');
    if (eq < 0) env[kv] = '';
    else env[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  // BUILD=dist runs that variant's build as `npm start` does (made current first), not its sources under tsx.
  const build: ServerBuild = env['BUILD'] === 'dist' ? 'dist' : 'sources';
  delete env['BUILD'];
  return { name: name ?? a, env, cwd, build };
});

const db = await createBenchDb(backend);
const store = await db.openStore();
const now = Date.now();
const owner = await seedOwner(store, now);
const [agent] = await seedAgents(store, owner, 1, now);
await store.close();
if (!agent) throw new Error('no agent');
const baseUrl = 'http://localhost:9';
const procs: Proc[] = [];
try {
  for (const v of variants) {
    if (v.build === 'dist') ensureServerBuilt(v.cwd);
    procs.push(await startMandate({ name: v.name, databaseUrl: db.databaseUrl, dataDir: db.dataDir, baseUrl, port: await freePort(), env: v.env, build: v.build, ...(v.cwd ? { cwd: v.cwd } : {}) }));
  }
  const first = procs[0];
  if (!first) throw new Error('no variant');
  const pass = (await fetchPass(first.origin, agent, SITE)).access_token;
  const jwks = (await (await fetch(`${first.origin}/api/v1/jwks`)).json()) as { keys: (JWK & { kid: string })[] };
  const jwk = jwks.keys.find((k) => k.kid === decodeProtectedHeader(pass).kid);
  const baseline = await startBaseline({ jwk: jwk as object, port: await freePort() });
  procs.push(baseline);
  const mandates = procs.filter((p) => p !== baseline);
  if (processWarmup > 0) {
    await warmUp({ targets: [{ proc: baseline, path: '/verify' }, ...mandates.map((proc) => ({ proc, path: '/api/v1/verify' }))], agent, pass, concurrency, requests: processWarmup });
  }
  const warmup = 500;
  const rates: number[][] = variants.map(() => []);
  const cpu: number[] = variants.map(() => 0);
  const ratios: number[][] = variants.map(() => []);
  let baseCpu = 0;
  const baseRates: number[] = [];
  const detail = new Map<string, number[]>();
  const drive = async (p: Proc, path: string) => {
    const bodies = await verifyBodies(agent, pass, warmup + requests);
    let t0: [number, number] = [0, 0];
    let g0: [number, number] = [0, 0];
    let i0: [number, number] = [0, 0];
    let pg0 = 0;
    const m = await measured(p, () => runLoad({ origin: p.origin, concurrency, requests, warmup, next: (i) => {
      if (i === warmup) { t0 = threadCpuMs(p.pid); g0 = threadCpuMs(process.pid); i0 = machineIdle(); pg0 = postgresCpuMs(); }
      return { method: 'POST', path, body: bodies[i] ?? '' };
    }, ok: (s, b) => s === 200 && b.includes('"valid":true') }));
    const t1 = threadCpuMs(p.pid);
    const g1 = threadCpuMs(process.pid);
    const i1 = machineIdle();
    // All of PostgreSQL's processes, counted on PostgreSQL runs (for the baseline, which uses none, it is their background work).
    const pg1 = postgresCpuMs();
    const us = (ms: number) => (ms * 1000) / requests;
    const d = [us(t1[0] - t0[0]), us(t1[1] - t0[1]), us(g1[0] + g1[1] - g0[0] - g0[1]), (100 * (i1[0] - i0[0])) / Math.max(1, i1[1] - i0[1]), backend === 'postgres' ? us(pg1 - pg0) : 0];
    const acc = detail.get(p.name) ?? [0, 0, 0, 0, 0, 0];
    detail.set(p.name, [...d.map((x, k) => x + (acc[k] ?? 0)), (acc[5] ?? 0) + 1]);
    return m;
  };
  for (let r = 0; r < rounds; r++) {
    const b = await drive(baseline, '/verify');
    baseRates.push(b.result.perSec);
    baseCpu += b.cpuMs;
    const line = [`round ${r}: base ${b.result.perSec.toFixed(0)}`];
    // Variants in a rotating order, so none always runs right after the baseline.
    for (let k = 0; k < variants.length; k++) {
      const i = (k + r) % variants.length;
      const p = procs[i] as Proc;
      const m = await drive(p, '/api/v1/verify');
      if (m.result.errors) console.error(`${variants[i]?.name}: ${m.result.errors} errors: ${m.result.firstError}`);
      rates[i]?.push(m.result.perSec);
      ratios[i]?.push(m.result.perSec / b.result.perSec);
      cpu[i] = (cpu[i] ?? 0) + m.cpuMs;
      line.push(`${variants[i]?.name} ${m.result.perSec.toFixed(0)}`);
    }
    console.error(line.join(', '));
  }
  const sorted = (a: number[]) => [...a].sort((x, y) => x - y);
  // measured() takes the CPU of each whole run: its warm-up requests too.
  const answered = rounds * (warmup + requests);
  console.log(`baseline: ${median(sorted(baseRates)).toFixed(0)}/s, CPU ${((baseCpu * 1000) / answered).toFixed(0)} µs/op`);
  variants.forEach((v, i) => {
    const rs = sorted(ratios[i] ?? []);
    console.log(`${v.name.padEnd(12)} ${median(sorted(rates[i] ?? [])).toFixed(0)}/s  ratio median ${median(rs).toFixed(3)} (${rs[0]?.toFixed(2)}-${rs[rs.length - 1]?.toFixed(2)})  CPU ${(((cpu[i] ?? 0) * 1000) / answered).toFixed(0)} µs/op`);
  });
  // The whole machine's CPU per request (server, generator, PostgreSQL): when the machine is the bound
  // (as at 32 in flight on two cores), the baseline's total over a variant's is about its ratio.
  const totalOf = (d: number[]) => ((d[0] ?? 0) + (d[1] ?? 0) + (d[2] ?? 0) + (d[4] ?? 0)) / (d[5] ?? 1);
  const baseTotal = totalOf(detail.get(baseline.name) ?? []);
  for (const [name, d] of detail) {
    const n = d[5] ?? 1;
    const per = (k: number) => ((d[k] ?? 0) / n).toFixed(0);
    const db = backend === 'postgres' && name !== baseline.name ? `, postgres ${per(4)}` : '';
    const share = name === baseline.name ? '' : ` (baseline's / this: ${(baseTotal / totalOf(d)).toFixed(2)})`;
    console.log(`${name.padEnd(12)} server main ${per(0)} µs/op, other threads ${per(1)}, generator ${per(2)}${db}; all ${totalOf(d).toFixed(0)}${share}; machine idle ${per(3)} %`);
  }
} finally {
  for (const p of procs) await p.stop();
  await db.drop();
}
