import { sql } from 'kysely';
import type { Dialect, QuotaCount, QuotasRepo } from '../ports/index.ts';
import type { Db } from './db.ts';

/**
 * The advisory-lock class of owner quota locks: the two-key form of pg_advisory_xact_lock, whose key
 * space is apart from the one-key form (Kysely's migration lock) and from any other class.
 */
const QUOTA_LOCK_CLASS = 0x71756f; // "quo"

const quotaCount = (r: { count: number | string | bigint; soonest: number | string | null } | undefined): QuotaCount => ({
  count: Number(r?.count ?? 0),
  soonestExpiry: r?.soonest === null || r?.soonest === undefined ? null : Number(r.soonest),
});

/** Counts the quotas of decisions §25 are checked against (ports/quotas.ts). */
export function quotasRepo(db: Db, dialect: Dialect): QuotasRepo {
  return {
    async lockOwner(userId) {
      // hashtext folds the id into the int4 key; two owners sharing a hash only wait for each other.
      if (dialect === 'postgres') await sql`SELECT pg_advisory_xact_lock(${QUOTA_LOCK_CLASS}, hashtext(${userId}))`.execute(db);
    },
    async openRequests(userId, now) {
      // An index range on authz_requests_open (user_id, expires_at) WHERE status = 'pending'.
      const r = await db
        .selectFrom('authz_requests')
        .select((eb) => [eb.fn.countAll<number>().as('count'), eb.fn.min<number | null>('expires_at').as('soonest')])
        .where('user_id', '=', userId)
        .where('status', '=', 'pending')
        .where('expires_at', '>', now)
        .executeTakeFirst();
      return quotaCount(r);
    },
    async liveSites(userId, now) {
      const r = await db
        .selectFrom('grants')
        .select((eb) => [eb.fn.count<number>('site').distinct().as('count'), eb.fn.min<number | null>('expires_at').as('soonest')])
        .where('user_id', '=', userId)
        .where('status', '=', 'active')
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
        .executeTakeFirst();
      return quotaCount(r);
    },
    async hasLiveSite(userId, site, now) {
      const r = await db
        .selectFrom('grants')
        .select('id')
        .where('user_id', '=', userId)
        .where('site', '=', site)
        .where('status', '=', 'active')
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
        .limit(1)
        .executeTakeFirst();
      return r !== undefined;
    },
    async liveAgents(userId) {
      const r = await db
        .selectFrom('agents')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .where('user_id', '=', userId)
        .where('status', '!=', 'removed')
        .executeTakeFirst();
      return Number(r?.count ?? 0);
    },
  };
}
