import type { Selectable } from 'kysely';
import type { NotificationRecord, NotificationType, NotificationsRepo } from '../ports/index.ts';
import type { NotificationsTable } from '../schema.ts';
import { type Db, affected, numOrNull, purgeInChunks } from './db.ts';

const toRecord = (r: Selectable<NotificationsTable>): NotificationRecord => ({
  id: r.id,
  seq: Number(r.seq),
  userId: r.user_id,
  type: r.type as NotificationType,
  title: r.title,
  body: r.body,
  createdAt: Number(r.created_at),
  readAt: numOrNull(r.read_at),
  txnId: r.txn_id,
  takeoverId: r.takeover_id,
});

/** `purgeChunk`: rows deleted per statement at most (SQLITE_PURGE_CHUNK); all at once when absent. */
export function notificationsRepo(db: Db, purgeChunk?: number): NotificationsRepo {
  return {
    async add(n) {
      const row = await db
        .insertInto('notifications')
        .values({ id: n.id, user_id: n.userId, type: n.type, title: n.title, body: n.body, created_at: n.createdAt, read_at: n.readAt, txn_id: n.txnId, takeover_id: n.takeoverId })
        .returningAll()
        .executeTakeFirstOrThrow();
      return toRecord(row);
    },
    async list(userId, q) {
      let query = db.selectFrom('notifications').selectAll().where('user_id', '=', userId).where('created_at', '>=', q.since);
      if (q.before > 0) query = query.where('seq', '<', q.before);
      return (await query.orderBy('seq', 'desc').limit(q.limit).execute()).map(toRecord);
    },
    async unreadCount(userId, since) {
      const r = await db
        .selectFrom('notifications')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('user_id', '=', userId)
        .where('read_at', 'is', null)
        .where('created_at', '>=', since)
        .executeTakeFirstOrThrow();
      return Number(r.n);
    },
    async markRead(userId, marks, at) {
      if ('ids' in marks && marks.ids.length === 0) return 0;
      if ('txnIds' in marks && marks.txnIds.length === 0) return 0;
      if ('takeoverIds' in marks && marks.takeoverIds.length === 0) return 0;
      let q = db.updateTable('notifications').set({ read_at: at }).where('user_id', '=', userId).where('read_at', 'is', null);
      if ('ids' in marks) q = q.where('id', 'in', marks.ids);
      else if ('txnIds' in marks) q = q.where('txn_id', 'in', marks.txnIds);
      else if ('takeoverIds' in marks) q = q.where('takeover_id', 'in', marks.takeoverIds);
      return affected(await q.executeTakeFirst());
    },
    purgeOlderThan: (before) =>
      purgeInChunks(purgeChunk, async (limit) => {
        const q = limit === undefined
          ? db.deleteFrom('notifications').where('created_at', '<', before)
          : db.deleteFrom('notifications').where('seq', 'in', db.selectFrom('notifications').select('seq').where('created_at', '<', before).limit(limit));
        return affected(await q.executeTakeFirst());
      }),
    async deleteForUser(userId) {
      return affected(await db.deleteFrom('notifications').where('user_id', '=', userId).executeTakeFirst());
    },
  };
}
