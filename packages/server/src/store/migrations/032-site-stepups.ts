import type { Kysely } from 'kysely';
import type { Dialect } from '../ports/index.ts';

/**
 * Site step-ups (decisions §28, issue 30): a step-up may be filed by the site the agent acts at
 * (POST /api/v1/stepup/site) rather than by the agent. `filed_by` says who: `site`, or null for
 * everything filed before and by agents. The site's poll and its receipt read are allowed only for
 * requests the site filed, and the owner's card says that the site asks.
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema.alterTable('authz_requests').addColumn('filed_by', 'text').execute();
}
