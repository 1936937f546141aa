import type { LeasesRepo } from '../ports/index.ts';
import { type Db, affected } from './db.ts';

export function leasesRepo(db: Db): LeasesRepo {
  return {
    async acquire(name, holder, now, ttlMs) {
      // One statement on both dialects: insert, or take over only when the row is ours or expired.
      // When the condition fails nothing is updated and RETURNING yields no row. PostgreSQL locks
      // the conflicting row and re-checks the condition on its latest version, so of racing
      // holders exactly one sees its own write.
      const row = await db
        .insertInto('leases')
        .values({ name, holder, expires_at: now + ttlMs })
        .onConflict((oc) =>
          oc
            .column('name')
            .doUpdateSet((eb) => ({ holder: eb.ref('excluded.holder'), expires_at: eb.ref('excluded.expires_at') }))
            .where((eb) => eb.or([eb('leases.holder', '=', holder), eb('leases.expires_at', '<=', now)])),
        )
        .returning('holder')
        .executeTakeFirst();
      return row?.holder === holder;
    },
    async release(name, holder) {
      return affected(await db.deleteFrom('leases').where('name', '=', name).where('holder', '=', holder).executeTakeFirst()) === 1;
    },
    async get(name) {
      const r = await db.selectFrom('leases').selectAll().where('name', '=', name).executeTakeFirst();
      return r ? { name: r.name, holder: r.holder, expiresAt: Number(r.expires_at) } : undefined;
    },
  };
}
