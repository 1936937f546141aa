import { sql } from 'kysely';
import type { CountersRepo } from '../ports/index.ts';
import type { Db } from './db.ts';

/** Atomically increments the counter `name` (starting at 1) and returns the new value. */
export async function nextValue(db: Db, name: string): Promise<number> {
  const r = await db
    .insertInto('counters')
    .values({ name, value: 1 })
    .onConflict((oc) => oc.column('name').doUpdateSet({ value: sql`counters.value + 1` }))
    .returning('value')
    .executeTakeFirstOrThrow();
  return Number(r.value);
}

export function countersRepo(db: Db): CountersRepo {
  return {
    next: (name) => nextValue(db, name),
    async current(name) {
      const r = await db.selectFrom('counters').select('value').where('name', '=', name).executeTakeFirst();
      return r ? Number(r.value) : 0;
    },
  };
}
