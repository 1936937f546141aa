import type { OutboxRepo } from '../ports.ts';
import { type Db, numOrNull } from './db.ts';

export function outboxRepo(db: Db): OutboxRepo {
  return {
    async add(m) {
      const r = await db
        .insertInto('outbox')
        .values({ user_id: m.userId, channel: m.channel, kind: m.kind, payload: JSON.stringify(m.payload), created_at: m.createdAt, sent_at: null })
        .returning('id')
        .executeTakeFirstOrThrow();
      return Number(r.id);
    },
    async list(filter) {
      let q = db.selectFrom('outbox').selectAll();
      if (filter.userId !== undefined) q = q.where('user_id', '=', filter.userId);
      if (filter.kind !== undefined) q = q.where('kind', '=', filter.kind);
      const rows = await q.orderBy('id', 'desc').limit(filter.limit ?? 100).execute();
      return rows.map((r) => ({
        id: Number(r.id),
        userId: r.user_id,
        channel: r.channel,
        kind: r.kind,
        payload: JSON.parse(r.payload) as Record<string, unknown>,
        createdAt: Number(r.created_at),
        sentAt: numOrNull(r.sent_at),
      }));
    },
    async markSent(id, at) {
      await db.updateTable('outbox').set({ sent_at: at }).where('id', '=', id).execute();
    },
  };
}
