import type { VerifierConfig } from './config.ts';
import { callService, isRecord } from './service-client.ts';

/** Report kinds (interface.md). Mandate weighs each site's latest report: good +2, policy and scraping -3, spam -5, abuse -8, fraud -10. */
export const REPORT_KINDS = ['good', 'spam', 'abuse', 'fraud', 'policy', 'scraping'] as const;
export type ReportKind = (typeof REPORT_KINDS)[number];

export type ReportAccepted = {
  ok: true;
  agentId: string;
  /** The reporting site: the pass's audience. */
  site: string;
  kind: ReportKind;
  /** False when a `good` report did not replace this site's earlier negative report (which still counts). */
  counted: boolean;
};

export type ReportRefused = {
  ok: false;
  /** 400 refused by Mandate (forged, foreign or too old pass; bad input), 429 rate limited, 503 Mandate unreachable. */
  status: 400 | 429 | 503;
  error: 'invalid_report' | 'rate_limited' | 'service_unavailable';
  description: string;
  /** With `rate_limited`: seconds to wait. */
  retryAfterSec?: number;
};

export type ReportResult = ReportAccepted | ReportRefused;

const MAX_DETAIL = 2000;

const isReportKind = (k: unknown): k is ReportKind => typeof k === 'string' && (REPORT_KINDS as readonly string[]).includes(k);

function detailOf(body: unknown): string | undefined {
  if (!isRecord(body)) return undefined;
  const d = body['detail'];
  if (typeof d === 'string') return d;
  if (Array.isArray(d) && isRecord(d[0]) && typeof d[0]['msg'] === 'string') return d[0]['msg'];
  return undefined;
}

/**
 * `POST /api/v1/reports`: tells Mandate how an agent behaved at your site. `accessToken` is a pass
 * the agent presented to you (it may have expired, but must have been minted at most 7 days ago).
 * Never throws: every outcome is a typed result.
 */
export async function sendReport(config: VerifierConfig, accessToken: string, kind: ReportKind, detail?: string): Promise<ReportResult> {
  const invalid = (description: string): ReportRefused => ({ ok: false, status: 400, error: 'invalid_report', description });
  if (typeof accessToken !== 'string' || accessToken === '') return invalid('the access token is missing');
  if (!isReportKind(kind)) return invalid(`kind must be one of ${REPORT_KINDS.join(', ')}`);
  if (detail !== undefined && (typeof detail !== 'string' || detail.length > MAX_DETAIL)) return invalid(`detail must be a string of at most ${MAX_DETAIL} characters`);

  let res;
  try {
    res = await callService(config, '/api/v1/reports', { method: 'POST', body: { access_token: accessToken, kind, ...(detail === undefined ? {} : { detail }) } });
  } catch (e) {
    return { ok: false, status: 503, error: 'service_unavailable', description: e instanceof Error ? e.message : String(e) };
  }
  const b = res.body;
  if (res.status === 200 && isRecord(b) && b['ok'] === true && typeof b['agent_id'] === 'string' && typeof b['site'] === 'string' && isReportKind(b['kind'])) {
    return { ok: true, agentId: b['agent_id'], site: b['site'], kind: b['kind'], counted: b['counted'] !== false };
  }
  if (res.status === 429) {
    const retry = isRecord(b) && typeof b['retry_after'] === 'number' ? b['retry_after'] : Number(res.headers.get('retry-after') ?? NaN);
    return { ok: false, status: 429, error: 'rate_limited', description: 'too many reports from this site; wait and retry', ...(Number.isFinite(retry) ? { retryAfterSec: retry } : {}) };
  }
  if (res.status === 400 || res.status === 422) return invalid(detailOf(b) ?? `Mandate refused the report (${res.status})`);
  return { ok: false, status: 503, error: 'service_unavailable', description: `POST /api/v1/reports answered ${res.status}` };
}
