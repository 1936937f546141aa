import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Store } from '../store/ports.ts';
import type { Clock } from './clock.ts';
import { INBOX_MS } from './notifications/inbox.ts';
import { expireStaleRequests } from './approvals/expiry.ts';

/** Sent and failed outbox messages are kept this long for diagnosis, then deleted. */
export const OUTBOX_KEEP_MS = 7 * 86_400_000;
/** OIDC sign-ins that ended or expired are kept this long (a reused refresh token still reads "ended"), then deleted. */
export const SIGN_IN_KEEP_MS = 7 * 86_400_000;

/**
 * Removes what has expired: sessions, WebAuthn challenges, single-use records, rate counters,
 * notifications past the inbox's 30 days, outbox messages and OIDC sign-ins that ended a week ago,
 * CIBA requests a day after they expired, and marks stale
 * requests expired. Expired rows are already refused by every query that reads them, so
 * this only bounds the tables' size; running it twice, or on two nodes at once, is harmless.
 */
export async function purgeExpired(store: Store, clock: Clock): Promise<Record<string, number>> {
  const now = clock.now();
  return {
    sessions: await store.sessions.purgeExpired(now),
    challenges: await store.challenges.purgeExpired(now),
    singleUse: await store.singleUse.purgeExpired(now),
    rateCounters: await store.rateCounters.purgeExpired(now),
    requests: (await expireStaleRequests({ store, clock }, now)).length,
    notifications: await store.notifications.purgeOlderThan(now - INBOX_MS),
    outbox: await store.outbox.purgeEnded(now - OUTBOX_KEEP_MS),
    oidcSignIns: await store.oidcSignIns.purgeEnded(now - SIGN_IN_KEEP_MS),
    // A day after expiry, a late poll still reads "unknown" rather than "expired": harmless.
    oidcCiba: await store.oidcCiba.purgeExpired(now - 86_400_000),
  };
}

/** The lease (in the shared store) whose holder runs the background work of the whole deployment. */
export const HOUSEKEEPING_LEASE = 'housekeeping';

/**
 * How long a taken lease lasts, in sweep intervals. The holder renews it at every sweep, so it can
 * miss two before another node may take over; a node that dies is replaced within about
 * (LEASE_INTERVALS + 1) intervals.
 */
export const LEASE_INTERVALS = 3;

/** This process's name in leases: host, process id and a random part (pids repeat across hosts and restarts). */
export function nodeName(): string {
  return `${hostname()}/${process.pid}/${randomBytes(4).toString('hex')}`;
}

/** What housekeeping writes to the log; pino's and Fastify's loggers fit. */
export interface HousekeepingLog {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
}

/**
 * One round on one node: take (or renew) the housekeeping lease and, only when this node holds it,
 * sweep. Background jobs that must run once per deployment go here, under the same lease (the expiry
 * sweep; outbox delivery is not one: every node sends, each message claimed by one node).
 * Answers the sweep's counts, or null when another node holds the lease.
 */
export async function housekeepingRound(store: Store, clock: Clock, holder: string, intervalMs: number): Promise<Record<string, number> | null> {
  const held = await store.leases.acquire(HOUSEKEEPING_LEASE, holder, clock.now(), intervalMs * LEASE_INTERVALS);
  if (!held) return null;
  return purgeExpired(store, clock);
}

export interface HousekeepingOptions {
  intervalMs: number;
  /** This node's name in the lease; `nodeName()` by default. */
  holder?: string;
  log: HousekeepingLog;
}

/**
 * Runs `housekeepingRound` every `intervalMs` on every node; only the lease holder sweeps. `stop()`
 * waits for a round in flight and gives the lease up, so another node takes over at its next round
 * instead of after the lease expires.
 */
export function scheduleHousekeeping(store: Store, clock: Clock, opts: HousekeepingOptions): { holder: string; stop(): Promise<void> } {
  const holder = opts.holder ?? nodeName();
  let holding = false;
  let inFlight: Promise<void> | null = null;
  const round = async () => {
    try {
      const swept = await housekeepingRound(store, clock, holder, opts.intervalMs);
      if (swept && !holding) opts.log.info({ holder, lease: HOUSEKEEPING_LEASE }, 'housekeeping lease taken: this node runs the background work');
      if (!swept && holding) opts.log.info({ holder, lease: HOUSEKEEPING_LEASE }, 'housekeeping lease lost: another node runs the background work');
      holding = swept !== null;
      if (swept) opts.log.info({ holder, swept }, 'housekeeping swept');
    } catch (err) {
      // The database may be away for a while; the next round tries again.
      opts.log.warn({ err, holder }, 'housekeeping failed');
    }
  };
  const timer = setInterval(() => {
    // A round still waiting on a slow database is not stacked upon.
    if (inFlight) return;
    inFlight = round().finally(() => (inFlight = null));
  }, opts.intervalMs);
  timer.unref();
  return {
    holder,
    async stop() {
      clearInterval(timer);
      await inFlight;
      if (!holding) return;
      holding = false;
      try {
        await store.leases.release(HOUSEKEEPING_LEASE, holder);
      } catch (err) {
        opts.log.warn({ err, holder }, 'housekeeping lease not released; it expires by itself');
      }
    },
  };
}
