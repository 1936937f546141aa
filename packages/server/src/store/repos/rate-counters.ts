import { sql } from 'kysely';
import type { RateCountersRepo } from '../ports.ts';
import { type Db, affected } from './db.ts';

export function rateCountersRepo(db: Db): RateCountersRepo {
  return {
    async hit(key, windowMs, now) {
      const windowStart = now - (now % windowMs);
      const resetAt = windowStart + windowMs;
      const r = await db
        .insertInto('rate_counters')
        .values({ key, window_start: windowStart, count: 1, expires_at: resetAt })
        .onConflict((oc) => oc.columns(['key', 'window_start']).doUpdateSet({ count: sql`rate_counters.count + 1` }))
        .returning('count')
        .executeTakeFirstOrThrow();
      return { count: Number(r.count), resetAt };
    },
    async purgeExpired(now) {
      return affected(await db.deleteFrom('rate_counters').where('expires_at', '<=', now).executeTakeFirst());
    },
  };
}
