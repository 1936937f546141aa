/**
 * The readiness check of a site (decisions §22): what a site owner setting up with this instance
 * wants to know, in one answer. One fetch of the site's verification file through the outbound
 * guard (§24) says whether the site answers over https and whether it publishes a line of a client
 * or operator registered here; the store says what is registered for the host. Answers are kept 10
 * minutes in the shared store (every node answers the same; a site is fetched at most once per 10
 * minutes whoever asks), and each client address may ask 20 times an hour.
 */
import type { Clock } from '../../clock.ts';
import { iso } from '../../clock.ts';
import { OutboundError, type OutboundFetch, type OutboundPolicy, type OutboundResponse } from '../../outbound/types.ts';
import type { OidcClientRecord, OperatorRecord, Store } from '../../store/ports/index.ts';
import { type ClientLimit, checkClient } from '../client-limit.ts';
import type { RateLimiter } from '../rate-limit.ts';
import { VERIFICATION_PATH, verificationLine } from '../oidc/site-origins.ts';
import { operatorVerificationLine } from '../operators/verification.ts';
import { parseSiteInput } from './site-input.ts';

export const READINESS_CACHE_MS = 10 * 60_000;
export const READINESS_LIMIT: ClientLimit = { perAddress: 20, perNetwork: 100, windowSec: 3600 };
/** More clients than this on one host are not read (the answer says "at least"). */
const MAX_CLIENTS = 20;

/** One line of the check while it is worked out: whether it holds, and in words what was found. */
interface ReadinessLine {
  ok: boolean;
  detail: string;
}

/** The five things checked, in the order of the answer. */
export const READINESS_KEYS = ['https', 'reachable', 'verification_file', 'oidc_client', 'operator'] as const;
export type ReadinessKey = (typeof READINESS_KEYS)[number];

/**
 * The answer (decisions §22): the five fields are booleans, as the contract reads, so a program can
 * test them directly; `details` says in words, for people, why each one is what it is.
 */
export type ReadinessReport = { site: string } & Record<ReadinessKey, boolean> & {
  details: Record<ReadinessKey, string>;
  checked_at: string;
};

export interface ReadinessDeps {
  store: Store;
  clock: Clock;
  limiter: RateLimiter;
  /** The outbound guard (outbound/guarded-fetch.ts): the only way the site is fetched. */
  fetch: OutboundFetch;
  policy: OutboundPolicy;
}

/** What one fetch of the file gave: an HTTP answer (`tooLarge`: an answer over the 64 kB cap), or why there was none. */
type Probe = { url: string; answer: OutboundResponse | null; tooLarge: boolean; error: string | null };

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

export class Readiness {
  constructor(private readonly d: ReadinessDeps) {}

  /** The site's readiness: the fresh cached answer, or a new check. 400 for a bad `site`, 429 past the limit. */
  async check(siteInput: string, clientAddress: string): Promise<ReadinessReport> {
    const site = parseSiteInput(siteInput);
    await checkClient(this.d.limiter, 'readiness', clientAddress, READINESS_LIMIT);
    const cached = await this.d.store.readiness.fresh(site, this.d.clock.now());
    const stored = cached ? parseStoredReport(cached.report, site) : null;
    if (stored) return stored;
    const report = await this.run(site);
    const checkedAt = this.d.clock.now();
    await this.d.store.readiness.save({ site, report: JSON.stringify(report), checkedAt, expiresAt: checkedAt + READINESS_CACHE_MS });
    return report;
  }

  private async run(site: string): Promise<ReadinessReport> {
    const [clients, operators] = await Promise.all([this.d.store.oidcClients.listForHost(site, MAX_CLIENTS), this.d.store.operators.listForDomain(site)]);
    const secure = await this.probe(`https://${site}${VERIFICATION_PATH}`);
    // Only in development (OUTBOUND_ALLOW_LOOPBACK) may a site answer over plain http.
    const plain = !answered(secure) && this.d.policy.allowLoopback ? await this.probe(`http://${site}${VERIFICATION_PATH}`) : null;
    const used = plain && answered(plain) ? plain : secure;
    const lines: Record<ReadinessKey, ReadinessLine> = {
      https: httpsLine(secure),
      reachable: reachableLine(used, plain !== null && used === plain),
      verification_file: fileLine(used, site, clients, operators),
      oidc_client: clientLine(site, clients),
      operator: operatorLine(site, operators),
    };
    return {
      site,
      https: lines.https.ok,
      reachable: lines.reachable.ok,
      verification_file: lines.verification_file.ok,
      oidc_client: lines.oidc_client.ok,
      operator: lines.operator.ok,
      details: {
        https: lines.https.detail,
        reachable: lines.reachable.detail,
        verification_file: lines.verification_file.detail,
        oidc_client: lines.oidc_client.detail,
        operator: lines.operator.detail,
      },
      checked_at: iso(this.d.clock.now()),
    };
  }

  private async probe(url: string): Promise<Probe> {
    try {
      return { url, answer: await this.d.fetch(url, { method: 'GET', headers: { accept: 'text/plain' } }), tooLarge: false, error: null };
    } catch (error) {
      if (!(error instanceof OutboundError)) throw error;
      return { url, answer: null, tooLarge: error.reason === 'too_large', error: error.message };
    }
  }
}

/**
 * A cached answer read back, or null when the row is not one (not JSON, another shape such as an
 * older format, or another site): such a row is a miss and the site is checked again, never a 500.
 * Only the known fields are copied, so nothing unexpected in a row is ever served.
 */
export function parseStoredReport(text: string, site: string): ReadinessReport | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isRecord(value) || value['site'] !== site || typeof value['checked_at'] !== 'string' || Number.isNaN(Date.parse(value['checked_at'])) || !isRecord(value['details'])) return null;
  const details = value['details'];
  const flags = {} as Record<ReadinessKey, boolean>;
  const words = {} as Record<ReadinessKey, string>;
  for (const key of READINESS_KEYS) {
    const flag = value[key];
    const detail = details[key];
    if (typeof flag !== 'boolean' || typeof detail !== 'string') return null;
    flags[key] = flag;
    words[key] = detail;
  }
  return { site, ...flags, details: words, checked_at: value['checked_at'] };
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const answered = (p: Probe): boolean => p.answer !== null || p.tooLarge;

function httpsLine(p: Probe): ReadinessLine {
  if (p.answer) return { ok: true, detail: `${p.url} answered over https (status ${p.answer.status}) with a certificate this service trusts` };
  if (p.tooLarge) return { ok: true, detail: `${p.url} answered over https with a certificate this service trusts` };
  return { ok: false, detail: `no answer over https: ${p.error ?? 'unknown error'}` };
}

function reachableLine(p: Probe, plainHttp: boolean): ReadinessLine {
  const how = plainHttp ? ' over plain http, allowed only because OUTBOUND_ALLOW_LOOPBACK is on (development)' : '';
  if (p.tooLarge) return { ok: true, detail: `${p.url} answered${how}` };
  if (!p.answer) return { ok: false, detail: `this service could not reach the site: ${p.error ?? 'unknown error'}` };
  if (p.answer.status >= 500) return { ok: false, detail: `${p.url} answered ${p.answer.status}, a server error${how}` };
  return { ok: true, detail: `${p.url} answered ${p.answer.status}${how}` };
}

function fileLine(p: Probe, site: string, clients: OidcClientRecord[], operators: OperatorRecord[]): ReadinessLine {
  if (p.tooLarge) return { ok: false, detail: `${p.url} is larger than 64 kB; serve a short text file` };
  if (!p.answer) return { ok: false, detail: 'not checked: the site could not be reached' };
  const { status, headers, body } = p.answer;
  if (status >= 300 && status < 400) return { ok: false, detail: `${p.url} answered ${status}, a redirect${headers['location'] ? ` to ${headers['location'].slice(0, 200)}` : ''}; redirects are not followed, so serve the file at exactly this address` };
  if (status === 404 || status === 410) return { ok: false, detail: `${p.url} answered ${status}: there is no file there yet` };
  if (status !== 200) return { ok: false, detail: `${p.url} answered ${status}; it must answer 200 with the file` };
  const lines = new Set(body.toString('utf8').split('\n').map((l) => l.trim()));
  const ours = [...lines].filter((l) => l.startsWith('mandate-client=') || l.startsWith('mandate-operator='));
  const clientsFound = clients.filter((c) => lines.has(verificationLine(c.id, c.verificationToken))).length;
  const operatorsFound = operators.filter((o) => lines.has(operatorVerificationLine(o.id, o.verificationToken))).length;
  if (clientsFound + operatorsFound > 0) {
    const what = [clientsFound > 0 ? plural(clientsFound, 'OIDC client') : '', operatorsFound > 0 ? plural(operatorsFound, 'operator') : ''].filter(Boolean).join(' and ');
    return { ok: true, detail: `${p.url} holds the line of ${what} registered on this instance for ${site}` };
  }
  if (ours.length > 0) return { ok: false, detail: `${p.url} holds ${plural(ours.length, 'mandate- line')}, but none of a client or operator registered on this instance for ${site} (an old token, or one from another instance?)` };
  return { ok: false, detail: `${p.url} is served (${body.length} bytes) but holds no mandate-client= or mandate-operator= line` };
}

function clientLine(site: string, clients: OidcClientRecord[]): ReadinessLine {
  if (clients.length === 0) return { ok: false, detail: `no OIDC client registered on this instance has a redirect URI on ${site}` };
  const verified = clients.filter((c) => c.verifiedOrigins.some((o) => new URL(o).host === site)).length;
  const count = clients.length >= MAX_CLIENTS ? `at least ${MAX_CLIENTS} OIDC clients` : plural(clients.length, 'OIDC client');
  return { ok: true, detail: `${count} registered on this instance with a redirect URI on ${site}; ${verified === 0 ? 'none verified yet' : `${verified} verified`}` };
}

function operatorLine(site: string, operators: OperatorRecord[]): ReadinessLine {
  if (operators.length === 0) return { ok: false, detail: `no operator registered on this instance has the domain ${site}` };
  const verified = operators.filter((o) => o.verifiedAt !== null).length;
  const active = operators.filter((o) => o.status === 'active').length;
  return { ok: true, detail: `${plural(operators.length, 'operator')} registered on this instance with the domain ${site}; ${verified} with the domain verified, ${active} switched on by an admin` };
}
