import type { Store } from '../store/ports.ts';
import type { Clock } from './clock.ts';

/**
 * Removes what has expired: sessions, WebAuthn challenges, single-use records, rate counters, and
 * marks stale requests expired. Expired rows are already refused by every query that reads them, so
 * this only bounds the tables' size; running it on several nodes at once is harmless.
 */
export async function purgeExpired(store: Store, clock: Clock): Promise<Record<string, number>> {
  const now = clock.now();
  return {
    sessions: await store.sessions.purgeExpired(now),
    challenges: await store.challenges.purgeExpired(now),
    singleUse: await store.singleUse.purgeExpired(now),
    rateCounters: await store.rateCounters.purgeExpired(now),
    requests: await store.authzRequests.expireStale(now),
  };
}

/** Runs `purgeExpired` every `intervalMs` in the background; returns a stopper. */
export function scheduleHousekeeping(store: Store, clock: Clock, intervalMs: number, onError: (e: unknown) => void): () => void {
  const timer = setInterval(() => {
    purgeExpired(store, clock).catch(onError);
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
