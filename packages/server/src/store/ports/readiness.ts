/**
 * The readiness cache (decisions §22): the last check of a site, shared by every node. Times are
 * epoch milliseconds.
 */

export interface ReadinessCheckRecord {
  /** The site id checked (lower-case host[:port]). */
  site: string;
  /** The answer as JSON text, served again unchanged until `expiresAt`. */
  report: string;
  checkedAt: number;
  expiresAt: number;
}

export interface ReadinessRepo {
  /** The site's check while it is fresh (`expiresAt` > now); undefined otherwise. */
  fresh(site: string, now: number): Promise<ReadinessCheckRecord | undefined>;
  /** Writes the site's check, replacing any earlier one (two nodes checking at once: the last write stays). */
  save(check: ReadinessCheckRecord): Promise<void>;
  /** Deletes checks that expired at or before `now`; answers how many. */
  purgeExpired(now: number): Promise<number>;
}
