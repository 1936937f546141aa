import type { OidcSubjectsRepo } from '../ports.ts';
import type { Db } from './db.ts';

export function oidcSubjectsRepo(db: Db): OidcSubjectsRepo {
  return {
    async remember(site, pairwise, agentId, now) {
      await db.insertInto('oidc_subjects').values({ site, pairwise, agent_id: agentId, created_at: now })
        .onConflict((oc) => oc.columns(['site', 'pairwise']).doNothing()).execute();
    },
    async find(sites, pairwise) {
      if (sites.length === 0) return undefined;
      const r = await db.selectFrom('oidc_subjects').select(['site', 'agent_id']).where('pairwise', '=', pairwise).where('site', 'in', [...sites])
        .orderBy('created_at').limit(1).executeTakeFirst();
      return r ? { site: r.site, agentId: r.agent_id } : undefined;
    },
  };
}
