import { runLoad } from '../lib/load.ts';
import type { Proc } from '../lib/processes.ts';
import { type Row, rowOf } from '../lib/table.ts';
import { dbCpu, measured, type LoadSettings } from './cloud-verify.ts';

/**
 * Reads whose cost may grow with the data: the signed revocation snapshot (its whole body, and the
 * `If-None-Match` poll that local verifiers send every minute) and the owner's activity pages.
 */
export async function readRows(o: { mandate: Proc; store: string; sessionToken: string; middleSeq: number; filterAgent: string; load: LoadSettings; sizeLabel: string }): Promise<Row[]> {
  const rows: Row[] = [];
  const first = await fetch(`${o.mandate.origin}/api/v1/revocation`);
  const etag = first.headers.get('etag') ?? '';
  await first.arrayBuffer();
  const auth = { authorization: `Bearer ${o.sessionToken}` };
  const scenarios: [string, string, Record<string, string>, number][] = [
    ['revocation snapshot GET (full body)', '/api/v1/revocation', {}, 200],
    ['revocation snapshot GET (If-None-Match: 304)', '/api/v1/revocation', { 'if-none-match': etag }, 304],
    ['activity: first page (50)', '/api/activity?limit=50', auth, 200],
    [`activity: deep page (before=${o.middleSeq})`, `/api/activity?limit=50&before=${o.middleSeq}`, auth, 200],
    ['activity: one agent (1 record in 100)', `/api/activity?limit=50&agent=${o.filterAgent}`, auth, 200],
  ];
  for (const [name, path, headers, status] of scenarios) {
    const { result, cpuMs, dbCpuMs } = await measured(o.mandate, () =>
      runLoad({ origin: o.mandate.origin, concurrency: o.load.concurrency, requests: o.load.requests, warmup: o.load.warmup, next: () => ({ method: 'GET', path, headers }), ok: (s) => s === status }));
    if (result.firstError !== undefined) console.error(`${name}: ${result.errors} unexpected answers, first: ${result.firstError}`);
    rows.push(rowOf(`${name}, ${o.sizeLabel}`, o.store, result, { rssMiB: o.mandate.rssMiB(), cpuUs: (cpuMs * 1000) / result.requests, ...dbCpu(o.store, (dbCpuMs * 1000) / result.requests) }));
  }
  return rows;
}
