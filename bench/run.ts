/**
 * Mandate benchmarks: one command, tables on stdout. Not tests: nothing here asserts a time; every
 * figure stands beside a baseline measured in the same run on the same machine, and the ratios are
 * what compare across machines. See bench/README.md.
 *
 *   npm run bench -- --store both --sizes 1k,100k,1M
 */
import { writeFileSync } from 'node:fs';
import { decodeProtectedHeader, type JWK } from 'jose';
import { USAGE, parseArgs, sizeLabel, type Options, type Suite } from './lib/args.ts';
import { enableIsolation } from './lib/isolation.ts';
import { explainHotQueries, formatPlans } from './lib/explain.ts';
import { fetchPass } from './lib/passes.ts';
import { freePort, startBaseline, startMandate, type Proc } from './lib/processes.ts';
import { SITE, fillerAgentIds, seedActivity, seedAgents, seedFiller, seedOwner, seedRevocations, type BenchAgent, type BenchOwner } from './lib/seed.ts';
import { createBenchDb, type Backend, type BenchDb } from './lib/stores.ts';
import { formatTable, type Row } from './lib/table.ts';
import { cloudVerifyRows, warmUp, type LoadSettings } from './suites/cloud-verify.ts';
import { localVerifyRows } from './suites/local-verify.ts';
import { readRows } from './suites/scale.ts';
import { spreadActivityFilters } from './lib/activity-filter-data.ts';
import { tokenPlan, tokenRows } from './suites/token.ts';
import { oidcPlan, oidcTokenRows, seedOidcAgents, OIDC_REDIRECT_URI } from './suites/oidc-token.ts';
import { startOidcProviderPeer } from './lib/oidc-provider-peer.ts';
import { pushFanout } from './push-fanout.ts';

const REVOCATION_ENTRIES = 10_000;

let options: Options;
try {
  options = parseArgs(process.argv.slice(2));
} catch (e) {
  console.error(e instanceof Error ? e.message : String(e));
  process.exit(e instanceof Error && e.message === USAGE ? 0 : 2);
}

if (options.isolate) enableIsolation();

const output: string[] = [];
const print = (text: string) => {
  console.log(text);
  output.push(text);
};
const log = (text: string) => console.error(`[bench ${new Date().toISOString().slice(11, 19)}] ${text}`);
const timed = async <T>(what: string, work: () => Promise<T>): Promise<T> => {
  const t0 = Date.now();
  const r = await work();
  log(`${what}: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return r;
};

/**
 * The verify agent's pass, renewed through its refresh token before it gets old, and whenever the
 * server was restarted (on another port, so under another BASE_URL: the issuer of its passes).
 */
class PassHolder {
  private pass = '';
  private refresh: string | undefined;
  private mintedAt = 0;
  private origin = '';
  constructor(private readonly agent: BenchAgent) {}
  async current(origin: string): Promise<string> {
    if (origin !== this.origin || Date.now() - this.mintedAt > 5 * 60_000) {
      this.origin = origin;
      const t = await fetchPass(origin, this.agent, SITE, this.refresh);
      this.pass = t.access_token;
      this.refresh = t.refresh_token;
      this.mintedAt = Date.now();
    }
    return this.pass;
  }
}

async function startServers(db: BenchDb, holder: PassHolder): Promise<{ mandate: Proc; baseline: Proc; baseUrl: string; pass: string }> {
  const port = await freePort();
  const baseUrl = `http://localhost:${port}`;
  const mandate = await startMandate({ databaseUrl: db.databaseUrl, dataDir: db.dataDir, baseUrl, port });
  const pass = await holder.current(mandate.origin);
  const jwks = (await (await fetch(`${mandate.origin}/api/v1/jwks`)).json()) as { keys: (JWK & { kid: string })[] };
  const jwk = jwks.keys.find((k) => k.kid === decodeProtectedHeader(pass).kid);
  if (jwk === undefined) throw new Error('the pass key is not published');
  const baseline = await startBaseline({ jwk, port: await freePort() });
  return { mandate, baseline, baseUrl, pass };
}

/** Fresh server processes get `--process-warmup` verifications each before cloud verify is measured on them. */
async function warmUpServers(servers: { mandate: Proc; baseline: Proc; pass: string }, agent: BenchAgent, concurrency: number): Promise<void> {
  if (options.processWarmup === 0) return;
  await timed(`warm-up: ${options.processWarmup} verifications on each process`, () =>
    warmUp({ targets: [{ proc: servers.baseline, path: '/verify' }, { proc: servers.mandate, path: '/api/v1/verify' }], agent, pass: servers.pass, concurrency, requests: options.processWarmup }),
  );
}

async function benchStore(backend: Backend, first: boolean): Promise<Row[]> {
  const rows: Row[] = [];
  const load: LoadSettings = { concurrency: options.concurrency, requests: options.requests, warmup: Math.min(1000, Math.ceil(options.requests / 10)), rounds: options.rounds };
  const db = await createBenchDb(backend);
  let servers: Awaited<ReturnType<typeof startServers>> | undefined;
  const stopServers = async () => {
    await servers?.mandate.stop();
    await servers?.baseline.stop();
    servers = undefined;
  };
  try {
    const store = await db.openStore();
    const now = Date.now();
    const owner: BenchOwner = await seedOwner(store, now);
    const [verifyAgent] = await seedAgents(store, owner, 1, now);
    const tokenLoad: LoadSettings = { ...load, requests: Math.ceil(load.requests / 3) };
    const tokenAgents = options.suites.has('token') ? await seedAgents(store, owner, tokenPlan(tokenLoad).agents, now) : [];
    const oidcLoad: LoadSettings = { ...load, requests: Math.ceil(load.requests / 3) };
    const oidcAgents = options.suites.has('oidc') ? await seedOidcAgents(store, owner, oidcPlan(oidcLoad).agents, now) : [];
    await store.close();
    if (!verifyAgent) throw new Error('no verify agent');
    const holder = new PassHolder(verifyAgent);

    servers = await startServers(db, holder);
    if (options.suites.has('cloud')) {
      log(`${backend}: cloud verify`);
      await warmUpServers(servers, verifyAgent, load.concurrency);
      rows.push(...(await cloudVerifyRows({ ...servers, agent: verifyAgent, pass: servers.pass, store: backend, load })));
      if (options.saturation > 0 && options.saturation !== load.concurrency) {
        rows.push(...(await cloudVerifyRows({ ...servers, agent: verifyAgent, pass: servers.pass, store: backend, load: { ...load, concurrency: options.saturation } })));
      }
    }
    if (options.suites.has('token')) {
      log(`${backend}: pass issuance`);
      rows.push(...(await tokenRows({ mandate: servers.mandate, baseline: servers.baseline, pass: servers.pass, agents: tokenAgents, store: backend, load: tokenLoad })));
    }
    if (options.suites.has('local') && first) {
      log('local verify (in-process)');
      rows.push(...(await localVerifyRows({ mandate: servers.mandate, baseUrl: servers.baseUrl, agent: verifyAgent, pass: servers.pass, load, note: 'in-process' })));
    }
    if (rows.length > 0) print(formatTable(`${backend}: verify, local verify, pass issuance (concurrency ${load.concurrency})`, rows));

    if (options.suites.has('oidc')) {
      log(`${backend}: OIDC token refresh, beside oidc-provider 8`);
      const peer = await startOidcProviderPeer({ port: await freePort(), redirectUri: OIDC_REDIRECT_URI });
      try {
        const oidcRows = await oidcTokenRows({ mandate: servers.mandate, issuer: servers.baseUrl, peer, owner, agents: oidcAgents, store: backend, load: oidcLoad });
        rows.push(...oidcRows);
        print(formatTable(`${backend}: OIDC token endpoint, grant_type=refresh_token, beside oidc-provider 8 (concurrency ${load.concurrency})`, oidcRows));
      } finally {
        await peer.proc.stop();
      }
    }

    if (options.suites.has('scale') && options.sizes.length > 0) {
      const scaleRows: Row[] = [];
      const raw = await db.raw();
      const grantId = (await raw.scalar(`SELECT id FROM grants WHERE agent_id = '${verifyAgent.id}'`)) as string;
      let seeded = 0;
      try {
        await stopServers();
        await timed(`${backend}: revocation list of ${REVOCATION_ENTRIES} entries`, () => seedRevocations(raw, backend, { count: REVOCATION_ENTRIES, now }));
        for (const size of options.sizes) {
          await stopServers();
          const label = `${sizeLabel(size)} agents+grants`;
          await timed(`${backend}: seeding to ${label} and ${sizeLabel(size)} activity records`, async () => {
            await seedFiller(raw, backend, { from: seeded, to: size, now });
            await seedActivity(raw, backend, { from: seeded, to: size, userId: owner.userId, agentIds: [verifyAgent.id, ...fillerAgentIds(99)], now });
            await spreadActivityFilters(raw, { userId: owner.userId, filterAgent: verifyAgent.id, added: size - seeded });
            // PostgreSQL's autovacuum would gather statistics soon after; the benchmark does not wait for it.
            if (backend === 'postgres') await raw.exec('ANALYZE');
          });
          seeded = size;
          const records = Number(await raw.scalar(`SELECT COUNT(*) FROM activity WHERE user_id = '${owner.userId}'`));
          const middleSeq = Math.ceil(records / 2);
          servers = await startServers(db, holder);
          log(`${backend}: ${label}`);
          const scaleLoad: LoadSettings = { ...load, concurrency: options.saturation || load.concurrency, requests: Math.ceil(load.requests / 2), rounds: Math.max(2, Math.ceil(load.rounds / 2)) };
          await warmUpServers(servers, verifyAgent, scaleLoad.concurrency);
          scaleRows.push(...(await cloudVerifyRows({ ...servers, agent: verifyAgent, pass: servers.pass, store: backend, load: scaleLoad, label: `cloud verify, ${label}, ${sizeLabel(REVOCATION_ENTRIES)} revoked` })));
          const readLoad: LoadSettings = { concurrency: Math.min(8, load.concurrency), requests: 400, warmup: 40, rounds: 1 };
          scaleRows.push(...(await readRows({ mandate: servers.mandate, store: backend, sessionToken: owner.sessionToken, middleSeq, filterAgent: verifyAgent.id, load: readLoad, sizeLabel: label })));
          if (options.suites.has('local') && first && size === options.sizes[0]) {
            scaleRows.push(...(await localVerifyRows({ mandate: servers.mandate, baseUrl: servers.baseUrl, agent: verifyAgent, pass: servers.pass, load, note: 'in-process' })));
          }
          print(formatTable(`${backend}: ${label}, ${sizeLabel(REVOCATION_ENTRIES)} revocation entries, ${sizeLabel(size)} activity records`, scaleRows.splice(0)));
          print(formatPlans(`${backend}: query plans at ${label}`, await explainHotQueries(db, { agentId: verifyAgent.id, grantId, userId: owner.userId, middleSeq, filterAgent: verifyAgent.id, now: Date.now(), flagScans: size >= 100_000 })));
        }
      } finally {
        await raw.close();
      }
    }
  } finally {
    await stopServers();
    await db.drop();
  }
  return rows;
}

const started = Date.now();
// The push fan-out needs no store: with --suites push alone, no database is made.
const STORE_SUITES: readonly Suite[] = ['cloud', 'local', 'token', 'scale', 'oidc'];
const storeRun = STORE_SUITES.some((s) => options.suites.has(s));
print(`# Mandate benchmark\n\nnode ${process.version}, ${(await import('node:os')).cpus().length} CPUs, suites: ${[...options.suites].join(', ')}${storeRun ? '' : ' (no store)'}, stores: ${options.stores.join(', ')}, sizes: ${options.sizes.map(sizeLabel).join(', ') || 'none'}, concurrency ${options.concurrency}${options.saturation > 0 ? ` (cloud verify also at ${options.saturation})` : ''}, ${options.requests} verify requests over ${options.rounds} rounds${options.isolate ? '; isolated: serving process on CPU 0, load generator and PostgreSQL backends on the other CPUs' : ''}`);
if (storeRun) {
  for (const [k, backend] of options.stores.entries()) await benchStore(backend, k === 0);
}
if (options.suites.has('push')) print(await pushFanout({ rounds: options.rounds }));
print(`\nTotal time: ${((Date.now() - started) / 1000).toFixed(0)} s`);
if (options.out !== undefined) writeFileSync(options.out, `${output.join('\n')}\n`);
