import type { ActivityRepo } from '../ports.ts';
import type { Db } from './db.ts';

export function activityRepo(db: Db): ActivityRepo {
  return {
    async add(a) {
      const r = await db
        .insertInto('activity')
        .values({ user_id: a.userId, agent_id: a.agentId, site: a.site, action: a.action, detail: JSON.stringify(a.detail), ip: a.ip, created_at: a.createdAt })
        .returning('seq')
        .executeTakeFirstOrThrow();
      return Number(r.seq);
    },
    async list(userId, q) {
      let sel = db.selectFrom('activity').selectAll().where('user_id', '=', userId);
      if (q.before > 0) sel = sel.where('seq', '<', q.before);
      if (q.agentId) sel = sel.where('agent_id', '=', q.agentId);
      if (q.site) sel = sel.where('site', '=', q.site);
      if (q.action) sel = sel.where('action', '=', q.action);
      const rows = await sel.orderBy('seq', 'desc').limit(q.limit).execute();
      return rows.map((r) => ({
        seq: Number(r.seq),
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
