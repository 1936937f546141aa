import type { SingleUseRepo } from '../ports.ts';
import { type Db, affected } from './db.ts';

export function singleUseRepo(db: Db): SingleUseRepo {
  return {
    async consume(namespace, key, expiresAt, now) {
      // The primary key (namespace, key) decides the race: the INSERT of exactly one caller returns a
      // row. An entry that has expired is taken over by an UPDATE guarded on its old expiry, which
      // again only one caller can win.
      const inserted = await db
        .insertInto('single_use')
        .values({ namespace, key, expires_at: expiresAt })
        .onConflict((oc) =>
          oc
            .columns(['namespace', 'key'])
            .doUpdateSet({ expires_at: expiresAt })
            .where('single_use.expires_at', '<=', now),
        )
        .returning('key')
        .executeTakeFirst();
      return inserted !== undefined;
    },
    async purgeExpired(now) {
      return affected(await db.deleteFrom('single_use').where('expires_at', '<=', now).executeTakeFirst());
    },
  };
}
