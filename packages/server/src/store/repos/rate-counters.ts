import { sql } from 'kysely';
import type { RateCountersRepo } from '../ports/index.ts';
import { type Db, affected, purgeInChunks } from './db.ts';

/** `purgeChunk`: expired rows deleted per statement at most (SQLITE_PURGE_CHUNK); all at once when absent. */
export function rateCountersRepo(db: Db, purgeChunk?: number): RateCountersRepo {
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
    async release(key, windowMs, at) {
      // Only the window `at` fell in, and never below zero: a release that comes after its window
      // ended (or after a clear) changes nothing.
      const windowStart = at - (at % windowMs);
      await db
        .updateTable('rate_counters')
        .set({ count: sql`count - 1` })
        .where('key', '=', key)
        .where('window_start', '=', windowStart)
        .where('count', '>', 0)
        .execute();
    },
    async clear(key) {
      await db.deleteFrom('rate_counters').where('key', '=', key).execute();
    },
    purgeExpired: (now) =>
      purgeInChunks(purgeChunk, async (limit) => {
        const expired = db.selectFrom('rate_counters').select(['key', 'window_start']).where('expires_at', '<=', now);
        const q = limit === undefined
          ? db.deleteFrom('rate_counters').where('expires_at', '<=', now)
          : db.deleteFrom('rate_counters').where((eb) => eb(eb.refTuple('key', 'window_start'), 'in', expired.limit(limit).$asTuple('key', 'window_start')));
        return affected(await q.executeTakeFirst());
      }),
  };
}
