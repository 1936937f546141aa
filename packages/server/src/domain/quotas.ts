import type { RateCountersRepo } from '../store/ports/index.ts';
import type { Clock } from '../clock.ts';
import { AppError } from './errors.ts';

/**
 * Per-owner quotas (decisions §25). Each bounds what one agent (or one owner's many agents) can put
 * in front of the owner or into the store, so a runaway or hostile agent floods nobody:
 * - open requests of every kind (access, step-up, OIDC sign-in, CIBA) per owner, at one time;
 * - access requests an agent files per hour, across all sites (the per-site limit stays besides);
 * - distinct sites where the owner holds a live grant;
 * - flag changes per agent per hour (each one advances the revocation sequence);
 * - CIBA requests (a site asking the owner to confirm an agent) per agent per client per hour, and
 *   per owner per hour across all sites (domain/oidc/ciba-quota.ts).
 * Beyond each: 429 with `retry_after` (the owner's approval that would pass the site quota: 409).
 */
export const QUOTAS = {
  openRequestsPerOwner: 50,
  accessRequestsPerAgentPerHour: 60,
  liveSitesPerOwner: 500,
  flagChangesPerAgentPerHour: 30,
  cibaRequestsPerAgentPerClientPerHour: 10,
  cibaRequestsPerOwnerPerHour: 60,
} as const;

/** The `quota` field of a quota's 429, for programs; `detail` says the same for people. */
export type QuotaName = 'open_requests' | 'access_requests_per_hour' | 'live_sites' | 'flag_changes_per_hour' | 'ciba_requests_per_hour';

const HOUR_MS = 3_600_000;

/**
 * 429 of a quota: the §10 shape (`detail` starting "rate limit exceeded", `retry_after`, the
 * Retry-After header), the detail naming the quota and what to do, and `quota` naming it for programs.
 */
export function quotaExceeded(quota: QuotaName, what: string, retryAfterSec: number, extra: Record<string, unknown> = {}): AppError {
  const s = Math.max(1, Math.ceil(retryAfterSec));
  return new AppError(429, `rate limit exceeded: ${what}`, { retry_after: s, quota, ...extra }, { 'retry-after': String(s) });
}

/**
 * Counts one event against an hourly budget of `key` in the shared store (a fixed window, like
 * RateLimiter, so it holds across nodes); past `limit`, throws what `exceeded` makes of the seconds
 * until the window ends.
 */
export async function countHourly(counters: RateCountersRepo, clock: Clock, key: string, limit: number, exceeded: (retryAfterSec: number) => AppError): Promise<void> {
  const now = clock.now();
  const { count, resetAt } = await counters.hit(key, HOUR_MS, now);
  if (count > limit) throw exceeded((resetAt - now) / 1000);
}
