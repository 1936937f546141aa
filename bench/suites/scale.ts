import { runLoad } from '../lib/load.ts';
import type { Proc } from '../lib/processes.ts';
import { type Row, ratio, rowOf } from '../lib/table.ts';
import { AGENT_SITE, COMMON_ACTION, RARE_ACTION, RARE_SITE } from '../lib/activity-filter-data.ts';
import { SITE } from '../lib/seed.ts';
import { alternate, dbCpu, measured, type LoadSettings } from './cloud-verify.ts';

/**
 * Reads whose cost may grow with the data: the signed revocation snapshot (its whole body, and the
 * `If-None-Match` poll that local verifiers send every minute) and the owner's activity pages.
 */
export async function readRows(o: { mandate: Proc; store: string; sessionToken: string; middleSeq: number; filterAgent: string; load: LoadSettings; sizeLabel: string }): Promise<Row[]> {
  const rows: Row[] = [];
  const first = await fetch(`${o.mandate.origin}/api/v1/revocation`);
  const etag = first.headers.get('etag') ?? '';
  await first.arrayBuffer();
  const scenarios: [string, string, Record<string, string>, number][] = [
    ['revocation snapshot GET (full body)', '/api/v1/revocation', {}, 200],
    ['revocation snapshot GET (If-None-Match: 304)', '/api/v1/revocation', { 'if-none-match': etag }, 304],
  ];
  for (const [name, path, headers, status] of scenarios) {
    const { result, cpuMs, dbCpuMs } = await measured(o.mandate, () =>
      runLoad({ origin: o.mandate.origin, concurrency: o.load.concurrency, requests: o.load.requests, warmup: o.load.warmup, next: () => ({ method: 'GET', path, headers }), ok: (s) => s === status }));
    if (result.firstError !== undefined) console.error(`${name}: ${result.errors} unexpected answers, first: ${result.firstError}`);
    // The CPU is that of the whole run: the measured requests and the warm-up's.
    const answered = result.requests + o.load.warmup;
    rows.push(rowOf(`${name}, ${o.sizeLabel}`, o.store, result, { rssMiB: o.mandate.rssMiB(), cpuUs: (cpuMs * 1000) / answered, ...dbCpu(o.store, (dbCpuMs * 1000) / answered) }));
  }
  rows.push(...(await activityRows(o)));
  return rows;
}

/**
 * The owner's activity pages, unfiltered and filtered (issue 14, item 6: a filter, however rarely it
 * matches, reads one index range and costs what the first page does). The unfiltered first page is
 * the baseline: every other page takes turns with it, round by round, and its ratio is its
 * throughput over the first page's in the rounds beside it. The data's spread is described in
 * lib/activity-filter-data.ts (agent: the first of 100 agents, all its records for AGENT_SITE).
 */
async function activityRows(o: { mandate: Proc; store: string; sessionToken: string; middleSeq: number; filterAgent: string; load: LoadSettings; sizeLabel: string }): Promise<Row[]> {
  const agent = `agent=${o.filterAgent}`;
  const pages: [string, string][] = [
    [`deep page (before=${o.middleSeq})`, `before=${o.middleSeq}`],
    ['one agent (1 record in 100)', agent],
    ['one site (1 record in 100)', `site=${AGENT_SITE}`],
    ['one action (1 record in 3)', `action=${COMMON_ACTION}`],
    ['rare site (1 record in 100k)', `site=${RARE_SITE}`],
    ['rare action (1 record in 100k)', `action=${RARE_ACTION}`],
    ['agent + a site it never used (0 records)', `${agent}&site=${SITE}`],
    ['agent + action (1 record in 300)', `${agent}&action=${COMMON_ACTION}`],
    ['agent + site + action (1 record in 300)', `${agent}&site=${AGENT_SITE}&action=${COMMON_ACTION}`],
    [`one site, deep page (before=${o.middleSeq})`, `site=${AGENT_SITE}&before=${o.middleSeq}`],
  ];
  const headers = { authorization: `Bearer ${o.sessionToken}` };
  const rounds = Math.max(2, o.load.rounds);
  const drive = (query: string) => () =>
    runLoad({ origin: o.mandate.origin, concurrency: o.load.concurrency, requests: Math.ceil(o.load.requests / rounds), warmup: o.load.warmup, next: () => ({ method: 'GET', path: `/api/activity?limit=50${query ? `&${query}` : ''}`, headers }), ok: (s) => s === 200 });
  const rows: Row[] = [];
  for (const [k, [name, query]] of pages.entries()) {
    const [base, page] = await alternate(rounds, o.load.warmup, { proc: o.mandate, run: drive('') }, { proc: o.mandate, run: drive(query) });
    for (const [what, r] of [['first page', base.result], [name, page.result]] as const) {
      if (r.firstError !== undefined) console.error(`activity ${what}: ${r.errors} unexpected answers, first: ${r.firstError}`);
    }
    // The first page is printed once, from the turns it took beside the first measured page.
    if (k === 0) rows.push(rowOf(`activity: first page (50), ${o.sizeLabel}: baseline of the activity rows`, o.store, base.result, { rssMiB: o.mandate.rssMiB(), cpuUs: base.cpuUs, ...dbCpu(o.store, base.dbCpuUs) }));
    rows.push(rowOf(`activity: ${name}, ${o.sizeLabel}`, o.store, page.result, { rssMiB: o.mandate.rssMiB(), cpuUs: page.cpuUs, ...dbCpu(o.store, page.dbCpuUs), ratio: ratio(page.result, base.result).replace('baseline', 'first page') }));
  }
  return rows;
}
