import type { AgentStatusesRepo } from '../ports/index.ts';
import type { Db } from './db.ts';

export function agentStatusesRepo(db: Db): AgentStatusesRepo {
  return {
    async upsert(s, keep) {
      await db
        .insertInto('agent_statuses')
        .values({ agent_id: s.agentId, site: s.site, status: s.status, created_at: s.createdAt })
        .onConflict((oc) => oc.columns(['agent_id', 'site']).doUpdateSet({ status: s.status, created_at: s.createdAt }))
        .execute();
      if (keep === undefined) return;
      // Within the primary key's (agent_id, site) range: at most keep + 1 rows are read here.
      await db
        .deleteFrom('agent_statuses')
        .where('agent_id', '=', s.agentId)
        .where('site', 'not in', db.selectFrom('agent_statuses').select('site').where('agent_id', '=', s.agentId).orderBy('created_at', 'desc').orderBy('site').limit(keep))
        .execute();
    },
    async listForAgent(agentId, limit) {
      let q = db.selectFrom('agent_statuses').selectAll().where('agent_id', '=', agentId).orderBy('created_at', 'desc').orderBy('site');
      if (limit !== undefined) q = q.limit(limit);
      return (await q.execute()).map((r) => ({ agentId: r.agent_id, site: r.site, status: r.status, createdAt: Number(r.created_at) }));
    },
  };
}
