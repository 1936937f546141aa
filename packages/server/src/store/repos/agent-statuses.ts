import type { AgentStatusesRepo } from '../ports.ts';
import type { Db } from './db.ts';

export function agentStatusesRepo(db: Db): AgentStatusesRepo {
  return {
    async upsert(s) {
      await db
        .insertInto('agent_statuses')
        .values({ agent_id: s.agentId, site: s.site, status: s.status, created_at: s.createdAt })
        .onConflict((oc) => oc.columns(['agent_id', 'site']).doUpdateSet({ status: s.status, created_at: s.createdAt }))
        .execute();
    },
    async listForAgent(agentId) {
      const rows = await db.selectFrom('agent_statuses').selectAll().where('agent_id', '=', agentId).orderBy('created_at', 'desc').execute();
      return rows.map((r) => ({ agentId: r.agent_id, site: r.site, status: r.status, createdAt: Number(r.created_at) }));
    },
  };
}
