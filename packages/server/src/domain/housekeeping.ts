import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Store } from '../store/ports/index.ts';
import type { Clock } from '../clock.ts';
import { INBOX_MS } from './notifications/inbox.ts';
import { expireStaleRequests } from './approvals/expiry.ts';

const DAY_MS = 86_400_000;
/** Sent and given-up outbox messages are kept this long for diagnosis, then deleted. */
export const OUTBOX_KEEP_MS = 7 * DAY_MS;
/** OIDC sign-ins that ended or expired are kept this long (a reused refresh token still reads "ended"), then deleted. */
export const SIGN_IN_KEEP_MS = 7 * DAY_MS;
/**
 * Answered, expired and consumed requests are kept this long past their expiry, then deleted: the
 * agent that filed one can still poll it for a week (afterwards it reads 404 unknown txn_id). The
 * owner's record of it is the activity trail, which carries what was asked and answered.
 */
export const REQUEST_KEEP_MS = 7 * DAY_MS;
/** CIBA requests are kept a day past their expiry: a late poll reads `expired_token`, not "unknown". */
export const CIBA_KEEP_MS = DAY_MS;
/** Used or expired email links are kept a day past their expiry: a late click reads "used or expired". */
export const EMAIL_LINK_KEEP_MS = DAY_MS;

/**
 * Removes what has expired, so no table grows without bound (decisions §25). Expired rows are
 * already refused by every query that reads them, so this only bounds the tables' size; running it
 * twice, or on two nodes at once, is harmless. Large deletes go in chunks on SQLite
 * (SQLITE_PURGE_CHUNK), so a big purge does not hold the event loop.
 *
 * Purged: sessions, WebAuthn challenges (pairing codes are challenges too), single-use records
 * (DPoP and OIDC code jtis), rate counters, all at their expiry; stale pending requests are first
 * marked expired (with their `request.expired` record), and requests that ended are deleted
 * REQUEST_KEEP_MS past their expiry (nothing reads them then: notifications open only pending
 * requests, CIBA rows that point at them go after CIBA_KEEP_MS, earlier; grants never point at a
 * request); notifications past the inbox's 30 days; delivered or given-up outbox messages after
 * OUTBOX_KEEP_MS; ended OIDC sign-ins after SIGN_IN_KEEP_MS; CIBA requests and email links a day past
 * their expiry; readiness answers at their expiry. Agent status lines are bounded when written (STATUS_SITES_KEPT per agent).
 *
 * Kept: accounts, passkeys, agents (removed ones are tombstones the revocation list and the trail
 * name), grants (revoked and superseded ones feed the revocation list, an agent's `revoked_sites`
 * and the polls of approved requests; each needs the owner's passkey, so they grow only as fast as
 * the owner approves), site reports (one per agent and site: the reputation), OIDC clients and
 * pairwise subjects (stable per site), push devices (50 per owner), settings, signing keys and
 * service secrets, leases and counters (a few rows), and the activity trail: the owner's audit
 * record, kept for as long as the account.
 */
export async function purgeExpired(store: Store, clock: Clock): Promise<Record<string, number>> {
  const now = clock.now();
  return {
    sessions: await store.sessions.purgeExpired(now),
    challenges: await store.challenges.purgeExpired(now),
    singleUse: await store.singleUse.purgeExpired(now),
    rateCounters: await store.rateCounters.purgeExpired(now),
    requests: (await expireStaleRequests({ store, clock }, now)).length,
    requestsPurged: await store.authzRequests.purgeEnded(now - REQUEST_KEEP_MS),
    notifications: await store.notifications.purgeOlderThan(now - INBOX_MS),
    outbox: await store.outbox.purgeEnded(now - OUTBOX_KEEP_MS),
    oidcSignIns: await store.oidcSignIns.purgeEnded(now - SIGN_IN_KEEP_MS),
    oidcCiba: await store.oidcCiba.purgeExpired(now - CIBA_KEEP_MS),
    emailTokens: await store.emailTokens.purgeExpired(now - EMAIL_LINK_KEEP_MS),
    emailClaims: await store.emailClaims.purgeExpired(now - EMAIL_LINK_KEEP_MS),
    // SMS codes (phone, recovery) last 10 minutes; kept a day after for diagnosis, like mailed links.
    phoneCodes: await store.phoneCodes.purgeExpired(now - EMAIL_LINK_KEEP_MS),
    oauthStates: await store.oauthStates.purgeExpired(now),
    // Take-over sessions last 10 minutes; their story stays in Activity. Kept a day for diagnosis.
    takeovers: await store.takeovers.purgeBefore(now - EMAIL_LINK_KEEP_MS),
    // Kept a day past expiry, so a reuse of a spent code can still end the connection it made.
    operatorCodes: await store.connections.purgeCodes(now - EMAIL_LINK_KEEP_MS),
    // Readiness answers are a 10-minute cache (decisions §22): nothing reads them once expired.
    readiness: await store.readiness.purgeExpired(now),
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
export async function housekeepingRound(store: Store, clock: Clock, holder: string, intervalMs: number, sweeps: Sweeps = {}): Promise<Record<string, number> | null> {
  const held = await store.leases.acquire(HOUSEKEEPING_LEASE, holder, clock.now(), intervalMs * LEASE_INTERVALS);
  if (!held) return null;
  const counts = await purgeExpired(store, clock);
  for (const [name, sweep] of Object.entries(sweeps)) counts[name] = await sweep();
  return counts;
}

/**
 * Sweeps of domain services that need more than the store (an activity record, a socket to close):
 * run after the purge, by the lease holder only. Each answers how many things it handled.
 */
export type Sweeps = Record<string, () => Promise<number>>;

export interface HousekeepingOptions {
  intervalMs: number;
  /** This node's name in the lease; `nodeName()` by default. */
  holder?: string;
  log: HousekeepingLog;
  sweeps?: Sweeps;
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
      const swept = await housekeepingRound(store, clock, holder, opts.intervalMs, opts.sweeps);
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
