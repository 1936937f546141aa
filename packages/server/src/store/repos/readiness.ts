import type { ReadinessRepo } from '../ports/index.ts';
import { type Db, affected } from './db.ts';

/** The readiness cache (ports/readiness.ts): one row per site, replaced by each new check. */
export function readinessRepo(db: Db): ReadinessRepo {
  return {
    async fresh(site, now) {
      const r = await db.selectFrom('readiness_checks').selectAll().where('site', '=', site).where('expires_at', '>', now).executeTakeFirst();
      return r ? { site: r.site, report: r.report, checkedAt: Number(r.checked_at), expiresAt: Number(r.expires_at) } : undefined;
    },
    async save(c) {
      await db
        .insertInto('readiness_checks')
        .values({ site: c.site, report: c.report, checked_at: c.checkedAt, expires_at: c.expiresAt })
        .onConflict((oc) => oc.column('site').doUpdateSet({ report: c.report, checked_at: c.checkedAt, expires_at: c.expiresAt }))
        .execute();
    },
    async purgeExpired(now) {
      return affected(await db.deleteFrom('readiness_checks').where('expires_at', '<=', now).executeTakeFirst());
    },
  };
}
