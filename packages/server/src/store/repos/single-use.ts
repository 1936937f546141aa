import type { SingleUseItem, SingleUseRepo } from '../ports/index.ts';
import { type Db, affected, purgeInChunks } from './db.ts';
import { prepared } from './prepared.ts';

/** One row per (namespace, key), sorted: concurrent statements then lock keys in the same order and cannot deadlock. */
export function distinctSorted(items: readonly SingleUseItem[]): SingleUseItem[] {
  const byId = new Map<string, SingleUseItem>();
  for (const item of items) {
    const id = idOf(item);
    if (!byId.has(id)) byId.set(id, item);
  }
  return [...byId.values()].sort((a, b) => cmp(a.namespace, b.namespace) || cmp(a.key, b.key));
}

export const idOf = (i: { namespace: string; key: string }): string => JSON.stringify([i.namespace, i.key]);
const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Statements for this many rows at most are kept compiled; larger calls are compiled each time. */
const MAX_PREPARED_ROWS = 256;

/** `purgeChunk`: expired rows deleted per statement at most (SQLITE_PURGE_CHUNK); all at once when absent. */
export function singleUseRepo(db: Db, purgeChunk?: number): SingleUseRepo {
  // The primary key (namespace, key) decides the race: the INSERT of exactly one caller returns a
  // row. An entry that has expired is taken over by an UPDATE guarded on its old expiry, which
  // again only one caller can win. In a multi-row statement each row is decided on its own.
  const upsert = (rows: number) => {
    const names = ['now', ...Array.from({ length: rows }, (_, i) => [`n${i}`, `k${i}`, `e${i}`]).flat()];
    return prepared(db, names, (p) =>
      db
        .insertInto('single_use')
        .values(Array.from({ length: rows }, (_, i) => ({ namespace: p(`n${i}`), key: p(`k${i}`), expires_at: p<number>(`e${i}`) })))
        .onConflict((oc) =>
          oc
            .columns(['namespace', 'key'])
            .doUpdateSet((eb) => ({ expires_at: eb.ref('excluded.expires_at') }))
            .where('single_use.expires_at', '<=', p<number>('now')),
        )
        .returning(['namespace', 'key']));
  };
  const bySize = new Map<number, ReturnType<typeof upsert>>();

  const repo: SingleUseRepo = {
    async consume(namespace, key, expiresAt, now) {
      const [first] = await repo.consumeMany([{ namespace, key, expiresAt }], now);
      return first === true;
    },
    async consumeMany(items, now) {
      if (items.length === 0) return [];
      const rows = distinctSorted(items);
      let run = bySize.get(rows.length);
      if (run === undefined) {
        run = upsert(rows.length);
        if (rows.length <= MAX_PREPARED_ROWS) bySize.set(rows.length, run);
      }
      const values: Record<string, unknown> = { now };
      rows.forEach((r, i) => {
        values[`n${i}`] = r.namespace;
        values[`k${i}`] = r.key;
        values[`e${i}`] = r.expiresAt;
      });
      const won = new Set((await run(values)).map(idOf));
      // Only the first listing of a key may report it; a repeat in the same call is a replay.
      return items.map((i) => won.delete(idOf(i)));
    },
    async release(namespace, key) {
      await db.deleteFrom('single_use').where('namespace', '=', namespace).where('key', '=', key).execute();
    },
    purgeExpired: (now) =>
      purgeInChunks(purgeChunk, async (limit) => {
        const expired = db.selectFrom('single_use').select(['namespace', 'key']).where('expires_at', '<=', now);
        const q = limit === undefined
          ? db.deleteFrom('single_use').where('expires_at', '<=', now)
          : db.deleteFrom('single_use').where((eb) => eb(eb.refTuple('namespace', 'key'), 'in', expired.limit(limit).$asTuple('namespace', 'key')));
        return affected(await q.executeTakeFirst());
      }),
  };
  return repo;
}
