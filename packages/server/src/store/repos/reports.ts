import type { ReportKind, ReportsRepo } from '../ports/index.ts';
import type { Db } from './db.ts';

export function reportsRepo(db: Db): ReportsRepo {
  return {
    async upsert(r, keep = []) {
      const res = await db
        .insertInto('reports')
        .values({ agent_id: r.agentId, site: r.site, kind: r.kind, detail: r.detail, created_at: r.createdAt })
        .onConflict((oc) => {
          const update = oc.columns(['agent_id', 'site']).doUpdateSet({ kind: r.kind, detail: r.detail, created_at: r.createdAt });
          return keep.length === 0 ? update : update.where('reports.kind', 'not in', [...keep]);
        })
        .executeTakeFirst();
      return Number(res.numInsertedOrUpdatedRows ?? 0n) > 0;
    },
    async listForAgent(agentId) {
      const rows = await db.selectFrom('reports').selectAll().where('agent_id', '=', agentId).orderBy('site').execute();
      return rows.map((r) => ({ agentId: r.agent_id, site: r.site, kind: r.kind as ReportKind, detail: r.detail, createdAt: Number(r.created_at) }));
    },
  };
}
