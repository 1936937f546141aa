import { type LoadResult, median } from './load.ts';

/** One line of a result table; NaN where a figure does not apply. */
export interface Row {
  scenario: string;
  store: string;
  perSec: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU time of the serving process per request (all its threads), in µs. */
  cpuUs: number;
  /** CPU time of the PostgreSQL server processes per request, in µs (PostgreSQL runs only). */
  dbCpuUs: number;
  rssMiB: number;
  /** e.g. "0.82 x baseline". */
  ratio?: string;
  errors: number;
}

export function rowOf(scenario: string, store: string, r: LoadResult, o: { rssMiB: number; cpuUs?: number; dbCpuUs?: number; ratio?: string }): Row {
  return { scenario, store, perSec: r.perSec, p50Ms: r.p50Ms, p99Ms: r.p99Ms, cpuUs: o.cpuUs ?? NaN, dbCpuUs: o.dbCpuUs ?? NaN, rssMiB: o.rssMiB, errors: r.errors, ...(o.ratio === undefined ? {} : { ratio: o.ratio }) };
}

export const fmt = (n: number, digits: number): string => (Number.isFinite(n) ? n.toFixed(digits) : '-');

const HEAD = ['scenario', 'store', 'ops/s', 'p50 ms', 'p99 ms', 'CPU µs/op', 'DB CPU µs/op', 'RSS MiB', 'errors', 'ratio'];
const NUMERIC = new Set([2, 3, 4, 5, 6, 7, 8]);

/** A Markdown table, so it pastes into an issue note as it is. */
export function formatTable(title: string, rows: readonly Row[]): string {
  const body = rows.map((r) => [r.scenario, r.store, fmt(r.perSec, 0), fmt(r.p50Ms, 2), fmt(r.p99Ms, 2), fmt(r.cpuUs, 0), fmt(r.dbCpuUs, 0), fmt(r.rssMiB, 0), String(r.errors), r.ratio ?? '']);
  return markdownTable(title, HEAD, body, NUMERIC);
}

/** A titled Markdown table with aligned columns; the columns in `numeric` are right-aligned. */
export function markdownTable(title: string, head: readonly string[], body: readonly string[][], numeric: ReadonlySet<number>): string {
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] ?? '').length)));
  const line = (cells: readonly string[]) => `| ${cells.map((c, i) => (numeric.has(i) ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (numeric.has(i) ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`;
  return [`\n### ${title}\n`, line(head), rule, ...body.map(line)].join('\n');
}

/**
 * Throughput of `value` over its baseline's. With rounds taken in turns (baseline, then scenario), the
 * median of the ratios of each round to the baseline round just before it, with their range: a
 * machine that slows down or speeds up between rounds moves both sides of a pair alike.
 */
export function ratio(value: LoadResult, base: LoadResult): string {
  const a = value.roundRates ?? [];
  const b = base.roundRates ?? [];
  if (a.length < 2 || a.length !== b.length) return `${(value.perSec / base.perSec).toFixed(2)} x baseline`;
  const paired = a.map((v, i) => v / (b[i] ?? NaN)).sort((x, y) => x - y);
  return `${median(paired).toFixed(2)} x baseline (rounds ${paired[0]?.toFixed(2)}-${paired[paired.length - 1]?.toFixed(2)})`;
}
