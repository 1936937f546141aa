import { createAgentJwt } from '@mandate/protocol';
import { runLoad } from '../lib/load.ts';
import { fetchPass } from '../lib/passes.ts';
import type { Proc } from '../lib/processes.ts';
import { SITE, type BenchAgent } from '../lib/seed.ts';
import { type Row, rowOf } from '../lib/table.ts';
import { dbCpu, measured, type LoadSettings } from './cloud-verify.ts';

/**
 * Pass issuance: `POST /api/v1/token` with the refresh token of the previous answer, under the same
 * concurrent load as verify. Each worker owns its own agents (a refresh token is single use, so an
 * agent's calls follow one another), and there are enough agents that the per-agent limit of 60 token
 * requests a minute is never reached. Each call: agent JWT check (ES256), rate counter, refresh
 * rotation (one compare-and-set), pass signing (ES256), activity record.
 */
export async function tokenRows(o: { mandate: Proc; agents: readonly BenchAgent[]; store: string; load: LoadSettings }): Promise<Row[]> {
  const c = o.load.concurrency;
  if (o.agents.length < c) throw new Error(`token bench: needs at least ${c} agents`);
  const refresh = new Map<number, string>();
  const jwts = new Map<number, string>();
  await Promise.all(o.agents.map(async (agent, k) => {
    refresh.set(k, (await fetchPass(o.mandate.origin, agent, SITE)).refresh_token);
    // Valid 15 minutes: one agent JWT per agent for the whole run (the server checks it on every call).
    jwts.set(k, await createAgentJwt(agent.privateKey, agent.id, { lifetimeSec: 900 }));
  }));
  const perWorker = Math.floor(o.agents.length / c);
  const sent = new Array<number>(c).fill(0);
  const { result, cpuMs, dbCpuMs } = await measured(o.mandate, () =>
    runLoad({
      origin: o.mandate.origin,
      concurrency: c,
      requests: o.load.requests,
      warmup: o.load.warmup,
      next: (_i, w) => {
        const k = w + c * ((sent[w] = (sent[w] ?? 0) + 1) % perWorker);
        const agent = o.agents[k] as BenchAgent;
        return { method: 'POST', path: '/api/v1/token', tag: k, body: JSON.stringify({ agent_id: agent.id, site: SITE, agent_jwt: jwts.get(k), refresh_token: refresh.get(k) }) };
      },
      ok: (status, body, req) => {
        if (status !== 200 || req.tag === undefined) return false;
        refresh.set(req.tag, (JSON.parse(body) as { refresh_token: string }).refresh_token);
        return true;
      },
    }));
  if (result.firstError !== undefined) console.error(`token: ${result.errors} unexpected answers, first: ${result.firstError}`);
  return [rowOf('pass issuance POST /api/v1/token (refresh)', o.store, result, { rssMiB: o.mandate.rssMiB(), cpuUs: (cpuMs * 1000) / result.requests, ...dbCpu(o.store, (dbCpuMs * 1000) / result.requests) })];
}
