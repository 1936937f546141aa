import type { ActivityRepo } from '../ports.ts';
import type { Db } from './db.ts';
import { nextValue } from './counters.ts';

/** The counter (in `counters`) that numbers one owner's records. */
export const ownerSeqCounter = (userId: string): string => `activity:${userId}`;

export function activityRepo(db: Db): ActivityRepo {
  return {
    async add(a) {
      // The owner's counter and the record are written in one transaction (the caller's, or one of
      // our own): a rollback or a crash undoes both, so the owner's sequence never skips a number.
      // The counter row stays locked until commit, which orders one owner's concurrent writes.
      const write = async (tx: Db): Promise<number> => {
        const ownerSeq = await nextValue(tx, ownerSeqCounter(a.userId));
        await tx
          .insertInto('activity')
          .values({ user_id: a.userId, owner_seq: ownerSeq, agent_id: a.agentId, site: a.site, action: a.action, detail: JSON.stringify(a.detail), ip: a.ip, created_at: a.createdAt })
          .execute();
        return ownerSeq;
      };
      return db.isTransaction ? write(db) : db.transaction().execute(write);
    },
    async list(userId, q) {
      let sel = db.selectFrom('activity').selectAll().where('user_id', '=', userId);
      if (q.before > 0) sel = sel.where('owner_seq', '<', q.before);
      if (q.agentId) sel = sel.where('agent_id', '=', q.agentId);
      if (q.site) sel = sel.where('site', '=', q.site);
      if (q.action) sel = sel.where('action', '=', q.action);
      const rows = await sel.orderBy('owner_seq', 'desc').limit(q.limit).execute();
      return rows.map((r) => ({
        seq: Number(r.owner_seq),
        userId: r.user_id,
        agentId: r.agent_id,
        site: r.site,
        action: r.action,
        detail: JSON.parse(r.detail) as Record<string, unknown>,
        ip: r.ip,
        createdAt: Number(r.created_at),
      }));
    },
  };
}
