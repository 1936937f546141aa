import type { OidcSubjectsRepo } from '../ports/index.ts';
import { type Db, affected } from './db.ts';

export function oidcSubjectsRepo(db: Db): OidcSubjectsRepo {
  return {
    async remember(clientId, site, pairwise, agentId, now) {
      await db.insertInto('oidc_subjects').values({ client_id: clientId, site, pairwise, agent_id: agentId, created_at: now })
        .onConflict((oc) => oc.columns(['client_id', 'pairwise', 'site']).doNothing()).execute();
    },
    async find(clientId, pairwise) {
      const r = await db.selectFrom('oidc_subjects').select(['site', 'agent_id']).where('client_id', '=', clientId).where('pairwise', '=', pairwise)
        .orderBy('created_at').orderBy('site').limit(1).executeTakeFirst();
      return r ? { site: r.site, agentId: r.agent_id } : undefined;
    },
    async forget(of) {
      let q = db.deleteFrom('oidc_subjects').where('agent_id', '=', of.agentId);
      if ('site' in of) q = q.where('site', '=', of.site);
      return affected(await q.executeTakeFirst());
    },
  };
}
