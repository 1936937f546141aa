import type { ApprovalMode, ApprovalModesRepo, PauseScope } from '../ports/index.ts';
import { type Db, affected } from './db.ts';

export function approvalModesRepo(db: Db): ApprovalModesRepo {
  return {
    async list(agentId) {
      const rows = await db.selectFrom('approval_modes').selectAll().where('agent_id', '=', agentId).orderBy('site').execute();
      return rows.map((r) => ({ agentId: r.agent_id, site: r.site, mode: r.mode as ApprovalMode, hourlyLimit: Number(r.hourly_limit) }));
    },
    async put(row) {
      await db
        .insertInto('approval_modes')
        .values({ agent_id: row.agentId, site: row.site, mode: row.mode, hourly_limit: row.hourlyLimit })
        .onConflict((oc) => oc.columns(['agent_id', 'site']).doUpdateSet({ mode: row.mode, hourly_limit: row.hourlyLimit }))
        .execute();
    },
    async remove(agentId, site) {
      return affected(await db.deleteFrom('approval_modes').where('agent_id', '=', agentId).where('site', '=', site).executeTakeFirst()) > 0;
    },
    async pauseScope(agentId) {
      const r = await db.selectFrom('approval_pause_scopes').select('pause_scope').where('agent_id', '=', agentId).executeTakeFirst();
      return r?.pause_scope as PauseScope | undefined;
    },
    async setPauseScope(agentId, scope) {
      await db
        .insertInto('approval_pause_scopes')
        .values({ agent_id: agentId, pause_scope: scope })
        .onConflict((oc) => oc.column('agent_id').doUpdateSet({ pause_scope: scope }))
        .execute();
    },
    async removeAgent(agentId) {
      await db.deleteFrom('approval_modes').where('agent_id', '=', agentId).execute();
      await db.deleteFrom('approval_pause_scopes').where('agent_id', '=', agentId).execute();
    },
  };
}
