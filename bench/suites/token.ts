import { createAgentJwt } from '@mandate/protocol';
import { type LoadRequest, type LoadResult, combineRounds, median, runLoad } from '../lib/load.ts';
import { startClientCredentialsPeer } from '../lib/oidc-provider-cc-peer.ts';
import { fetchPass } from '../lib/passes.ts';
import { freePort, threadCpuMs, type Proc } from '../lib/processes.ts';
import { SITE, type BenchAgent } from '../lib/seed.ts';
import { type Row, ratio, rowOf } from '../lib/table.ts';
import { dbCpu, measured, type LoadSettings } from './cloud-verify.ts';

/**
 * Pass issuance: `POST /api/v1/token` with the refresh token of the previous answer, beside two rows
 * measured in the same run, same load generator, same concurrency, rounds taking turns (bare route,
 * peer, Mandate), each round with an unmeasured warm-up outside the CPU count:
 * - the bare one-signature route (lib/baseline-server.ts: Fastify + one ES256 `jwtVerify`), sent the
 *   pass in a JSON body: the baseline both ratios are read against;
 * - oidc-provider 8's token endpoint, `client_credentials` with a fresh DPoP proof per call, in
 *   memory (lib/oidc-provider-cc-server.ts).
 * Each Mandate call: agent JWT check (ES256), the grant read, then in one group commit the rate
 * counter, the refresh rotation (compare-and-set) and the `pass.issued` record, then the pass signed
 * (ES256). Each worker owns its agents (a refresh token is single use, so an agent's calls follow one
 * another), and there are enough agents that none makes CALLS_PER_AGENT calls in the whole run (the
 * limit is 60 a minute per agent and site), whatever the run's length; a 429 fails the run.
 */

/** Token calls of one agent over the whole run (its first pass included), under the limit of 60 a minute. */
const CALLS_PER_AGENT = 40;

export interface TokenPlan {
  perRound: number;
  /** Requests sent before each side's measured requests in every round (not measured). */
  warmup: number;
  /** Agents (a multiple of the concurrency: each worker owns agents / concurrency). */
  agents: number;
}

export function tokenPlan(load: LoadSettings): TokenPlan {
  const perRound = Math.ceil(load.requests / load.rounds);
  const warmup = Math.min(load.warmup, Math.ceil(perRound / 4));
  const calls = load.rounds * (perRound + warmup);
  const perWorker = Math.max(4, Math.ceil(calls / (CALLS_PER_AGENT - 1) / load.concurrency));
  return { perRound, warmup, agents: perWorker * load.concurrency };
}

interface Side {
  name: string;
  proc: Proc;
  /** Requests for one phase (`n` of them, made before the phase starts). */
  requests(n: number): Promise<(i: number, worker: number) => LoadRequest>;
  ok(status: number, body: string, request: LoadRequest): boolean;
}

interface Taken {
  result: LoadResult;
  cpuUs: number;
  dbCpuUs: number;
  /** CPU µs per request of each round, in the order run. */
  roundCpuUs: number[];
  /** CPU µs per request of the serving process's main thread (its event loop), and of its other threads. */
  loopUs: number;
  threadsUs: number;
  warmupErrors: number;
  firstError: string | undefined;
}

/** Rounds of the sides taking turns, in order; each round a warm-up, then the measured requests with the CPU of that phase alone. */
async function takeTurns(sides: readonly Side[], plan: TokenPlan, rounds: number, concurrency: number): Promise<Taken[]> {
  const acc = sides.map(() => ({ results: [] as LoadResult[], cpuMs: 0, dbCpuMs: 0, loopMs: 0, threadsMs: 0, roundCpuUs: [] as number[], warmupErrors: 0, firstError: undefined as string | undefined }));
  const phase = async (side: Side, requests: number) => {
    const next = await side.requests(requests);
    return () => runLoad({ origin: side.proc.origin, concurrency, requests, warmup: 0, next, ok: side.ok });
  };
  for (let round = 0; round < rounds; round++) {
    for (const [k, side] of sides.entries()) {
      const a = acc[k];
      if (!a) continue;
      const warm = await (await phase(side, plan.warmup))();
      a.warmupErrors += warm.errors;
      a.firstError ??= warm.firstError;
      const run = await phase(side, plan.perRound);
      const [loop0, threads0] = threadCpuMs(side.proc.pid);
      const m = await measured(side.proc, run);
      const [loop1, threads1] = threadCpuMs(side.proc.pid);
      a.loopMs += loop1 - loop0;
      a.threadsMs += threads1 - threads0;
      a.results.push(m.result);
      a.cpuMs += m.cpuMs;
      a.dbCpuMs += m.dbCpuMs;
      a.roundCpuUs.push((m.cpuMs * 1000) / m.result.requests);
    }
  }
  return acc.map((a) => {
    const result = combineRounds(a.results);
    const perRequest = (ms: number) => (ms * 1000) / result.requests;
    return { result, cpuUs: perRequest(a.cpuMs), dbCpuUs: perRequest(a.dbCpuMs), roundCpuUs: a.roundCpuUs, loopUs: perRequest(a.loopMs), threadsUs: perRequest(a.threadsMs), warmupErrors: a.warmupErrors, firstError: a.firstError ?? result.firstError };
  });
}

/** CPU per request over the baseline's, round by round (each round beside the baseline round just before it): median and range. */
function cpuRatio(value: Taken, base: Taken): string {
  const paired = value.roundCpuUs.map((v, i) => v / (base.roundCpuUs[i] ?? NaN)).sort((x, y) => x - y);
  return `CPU ${median(paired).toFixed(2)} x bare (rounds ${paired[0]?.toFixed(2)}-${paired[paired.length - 1]?.toFixed(2)})`;
}

export async function tokenRows(o: { mandate: Proc; baseline: Proc; pass: string; agents: readonly BenchAgent[]; store: string; load: LoadSettings }): Promise<Row[]> {
  const c = o.load.concurrency;
  const plan = tokenPlan(o.load);
  if (o.agents.length < plan.agents) throw new Error(`token bench: needs ${plan.agents} agents, has ${o.agents.length}`);
  const agents = o.agents.slice(0, plan.agents);
  const refresh = new Map<number, string>();
  const jwts = new Map<number, string>();
  await Promise.all(agents.map(async (agent, k) => {
    refresh.set(k, (await fetchPass(o.mandate.origin, agent, SITE)).refresh_token);
    // Valid 15 minutes: one agent JWT per agent for the whole run (the server checks it on every call).
    jwts.set(k, await createAgentJwt(agent.privateKey, agent.id, { lifetimeSec: 900 }));
  }));
  const perWorker = plan.agents / c;
  const sent = new Array<number>(c).fill(0);
  const mandate: Side = {
    name: 'mandate',
    proc: o.mandate,
    requests: async () => (_i, w) => {
      const k = w + c * ((sent[w] = (sent[w] ?? 0) + 1) % perWorker);
      const agent = agents[k] as BenchAgent;
      return { method: 'POST', path: '/api/v1/token', tag: k, body: JSON.stringify({ agent_id: agent.id, site: SITE, agent_jwt: jwts.get(k), refresh_token: refresh.get(k) }) };
    },
    ok: (status, body, req) => {
      if (status !== 200 || req.tag === undefined) return false;
      refresh.set(req.tag, (JSON.parse(body) as { refresh_token: string }).refresh_token);
      return true;
    },
  };
  const bareBody = JSON.stringify({ access_token: o.pass });
  const bare: Side = {
    name: 'bare route',
    proc: o.baseline,
    requests: async () => () => ({ method: 'POST', path: '/verify', body: bareBody }),
    ok: (status, body) => status === 200 && body.includes('"valid":true'),
  };
  const peer = await startClientCredentialsPeer({ port: await freePort() });
  try {
    const oidc: Side = {
      name: 'oidc-provider',
      proc: peer.proc,
      requests: async (n) => {
        const reqs = await peer.requests(n);
        return (i) => reqs[i] as LoadRequest;
      },
      ok: (status, body) => peer.ok(status, body),
    };
    const [b, p, m] = await takeTurns([bare, oidc, mandate], plan, o.load.rounds, c);
    if (!b || !p || !m) throw new Error('token bench: a side is missing');
    const inFlight = `, ${c} in flight`;
    const rows = [
      rowOf(`bare route: Fastify + 1 ES256 jwtVerify${inFlight}`, o.store, b.result, { rssMiB: o.baseline.rssMiB(), cpuUs: b.cpuUs }),
      rowOf(`oidc-provider 8 POST /token (client_credentials, DPoP, in memory)${inFlight}`, 'memory', p.result, { rssMiB: peer.proc.rssMiB(), cpuUs: p.cpuUs, ratio: `${cpuRatio(p, b)}; ${ratio(p.result, b.result)}` }),
      rowOf(`pass issuance POST /api/v1/token (refresh, ${plan.agents} agents)${inFlight}`, o.store, m.result, { rssMiB: o.mandate.rssMiB(), cpuUs: m.cpuUs, ratio: `${cpuRatio(m, b)}; ${ratio(m.result, b.result)}`, ...dbCpu(o.store, m.dbCpuUs) }),
    ];
    for (const [name, s] of [['bare route', b], ['oidc-provider', p], ['mandate', m]] as const) {
      console.error(`token: ${name}: CPU per request ${s.cpuUs.toFixed(0)} µs: event loop ${s.loopUs.toFixed(0)} µs, other threads ${s.threadsUs.toFixed(0)} µs`);
    }
    const failed = ([['bare route', b], ['oidc-provider', p], ['mandate', m]] as const).filter(([, s]) => s.result.errors + s.warmupErrors > 0);
    for (const [name, s] of failed) console.error(`token: ${name}: ${s.result.errors + s.warmupErrors} unexpected answers (warm-ups included), first: ${s.firstError}`);
    return rows;
  } finally {
    await peer.proc.stop();
  }
}
