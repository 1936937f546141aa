import type { AgentFlag, ReportKind } from '../../store/ports/index.ts';

/** The report kinds of the interface, in a fixed order (answers list every kind, even at 0). */
export const REPORT_KINDS: readonly ReportKind[] = ['good', 'spam', 'abuse', 'fraud', 'policy', 'scraping'];

/** What a site's latest report adds to the score (decisions §9). */
export const REPORT_WEIGHTS: Readonly<Record<ReportKind, number>> = {
  good: 2,
  policy: -3,
  scraping: -3,
  spam: -5,
  abuse: -8,
  fraud: -10,
};

export const BASE_SCORE = 50;
export const MAX_AGE_BONUS = 10;
export const DAYS_PER_AGE_POINT = 30;
/** `suspicious` needs a low score confirmed by this many different sites. */
export const SUSPICIOUS_BELOW = 30;
export const SUSPICIOUS_MIN_SITES = 3;

export interface ScoreInput {
  ageDays: number;
  /** Removed, or flagged `revoked` by its owner. */
  revoked: boolean;
  /** The agent's own flag is `suspicious`. */
  flaggedSuspicious: boolean;
  /** The latest report of each reporting site, one entry per site. */
  latestPerSite: readonly ReportKind[];
}

export interface ScoreResult {
  score: number;
  flag: AgentFlag;
}

/** +1 per full 30 days of age, at most +10. */
export function ageBonus(ageDays: number): number {
  return Math.min(MAX_AGE_BONUS, Math.max(0, Math.floor(ageDays / DAYS_PER_AGE_POINT)));
}

/**
 * The reputation formula (decisions §9): 50 + age bonus + the weight of each site's latest report,
 * clamped to 0..100. Each site counts once, so one site moves the score by at most 12 (+2 .. -10).
 * A revoked agent scores 0.
 */
export function reputationScore(input: ScoreInput): ScoreResult {
  if (input.revoked) return { score: 0, flag: 'revoked' };
  const reports = input.latestPerSite.reduce((sum, kind) => sum + REPORT_WEIGHTS[kind], 0);
  const score = Math.min(100, Math.max(0, BASE_SCORE + ageBonus(input.ageDays) + reports));
  const lowAcrossSites = score < SUSPICIOUS_BELOW && input.latestPerSite.length >= SUSPICIOUS_MIN_SITES;
  return { score, flag: input.flaggedSuspicious || lowAcrossSites ? 'suspicious' : 'ok' };
}

/** Count of each kind over the latest report per site; every kind present, 0 when none. */
export function countKinds(latestPerSite: readonly ReportKind[]): Record<ReportKind, number> {
  const counts = Object.fromEntries(REPORT_KINDS.map((k) => [k, 0])) as Record<ReportKind, number>;
  for (const kind of latestPerSite) counts[kind] += 1;
  return counts;
}
