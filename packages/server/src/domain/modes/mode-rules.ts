import type { AgentApprovalDetails, ApprovalMode, ApprovalModeRow, PauseScope } from '../../store/ports/index.ts';
import type { ApprovalCategory } from './category.ts';

/** Approval modes (decisions §19): the pure rules. No I/O; the caller reads rows and counts. */

export const DEFAULT_MODE: ApprovalMode = 'ask';
export const DEFAULT_HOURLY_LIMIT = 20;
export const HOURLY_LIMIT_MIN = 1;
export const HOURLY_LIMIT_MAX = 200;
export const DEFAULT_PAUSE_SCOPE: PauseScope = 'domain';
/** After the owner denies an agent approval on a site, `smart` asks there for this long. */
export const DENIAL_PAUSE_MS = 3600_000;

export interface ModeMatch {
  mode: ApprovalMode;
  hourlyLimit: number;
  /** The row that matched (a host or `*`), or null for the built-in default. */
  site: string | null;
}

/** The parents of a host, nearest first: a.b.example.com -> b.example.com, example.com, com. A port is dropped. */
export function parentDomains(host: string): string[] {
  const labels = host.replace(/:[0-9]+$/, '').split('.');
  const out: string[] = [];
  for (let i = 1; i < labels.length; i++) out.push(labels.slice(i).join('.'));
  return out;
}

/** Lookup: the exact host, its parent domains (nearest first), `*`, then ask/20. */
export function lookupMode(rows: readonly ApprovalModeRow[], host: string): ModeMatch {
  const bySite = new Map(rows.map((r) => [r.site, r]));
  for (const site of [host, ...parentDomains(host), '*']) {
    const row = bySite.get(site);
    if (row) return { mode: row.mode, hourlyLimit: row.hourlyLimit, site: row.site };
  }
  return { mode: DEFAULT_MODE, hourlyLimit: DEFAULT_HOURLY_LIMIT, site: null };
}

/**
 * The domain a denial pauses: the host itself with pause scope `host`, else its registrable-looking
 * domain (the last two labels; three when the second-to-last is a short label such as co.uk), which
 * covers the site's other hosts. Without a public-suffix list this errs towards pausing more.
 */
export function pauseKey(host: string, scope: PauseScope): string {
  const bare = host.replace(/:[0-9]+$/, '');
  if (scope === 'host') return bare;
  const labels = bare.split('.');
  if (labels.length <= 2 || /^[0-9.]+$/.test(bare)) return bare;
  const take = labels.length >= 3 && (labels.at(-2) ?? '').length <= 3 && (labels.at(-1) ?? '').length === 2 ? 3 : 2;
  return labels.slice(-take).join('.');
}

/** Whether a denial at `deniedHost` pauses automatic approvals at `host`. */
export function denialPauses(deniedHost: string, host: string, scope: PauseScope): boolean {
  return pauseKey(deniedHost, scope) === pauseKey(host, scope);
}

export type ModeDecision =
  | { approve: true; reason: string }
  | { approve: false; reason: string };

export interface ModeFacts {
  match: ModeMatch;
  category: ApprovalCategory;
  site: string;
  details: AgentApprovalDetails;
  /** A denial of an agent approval on a paused site within DENIAL_PAUSE_MS. */
  recentlyDenied: boolean;
  /** Automatic approvals of this row in the current hour, before this one. */
  autoApprovedThisHour: number;
}

/**
 * The decision at filing time: `ask` always asks; `allow` approves at once except money and security;
 * `smart` approves at once only `low`, and not when the form posts to another host, within an hour of
 * a denial on that site, or past the hourly limit. The hourly limit binds `allow` too: a limit the
 * owner set for a site is never exceeded without a card.
 */
export function decideMode(f: ModeFacts): ModeDecision {
  const { mode, hourlyLimit } = f.match;
  if (mode === 'ask') return { approve: false, reason: 'mode ask' };
  if (f.autoApprovedThisHour >= hourlyLimit) return { approve: false, reason: `hourly limit of ${hourlyLimit} automatic approvals reached` };
  if (mode === 'allow') {
    if (f.category === 'money' || f.category === 'security') return { approve: false, reason: `mode allow never approves ${f.category} by itself` };
    return { approve: true, reason: `mode allow (${f.category})` };
  }
  if (f.category !== 'low') return { approve: false, reason: `mode smart approves only low actions (this one is ${f.category})` };
  const host = f.details.host ?? f.site;
  if (f.details.target_host !== undefined && f.details.target_host !== host) return { approve: false, reason: 'the form posts to another site' };
  if (f.recentlyDenied) return { approve: false, reason: 'you denied an approval on this site within the hour' };
  return { approve: true, reason: 'mode smart (low)' };
}
