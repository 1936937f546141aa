import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../ports/index.ts';

/**
 * CIBA's `login_hint` resolves only among the subjects the asking client itself was given (issue 22):
 * `oidc_subjects` gains `client_id` and is keyed by (client_id, pairwise, site). Before, a subject
 * was known per site (host), so any client with a redirect URI on that host, another account's
 * unverified one included, could name the agent.
 *
 * The rows of migration 010 are carried over once for each client that holds a sign-in of that
 * agent at that site which has not ended: that client was given the subject, and its access was not
 * revoked (revoking a grant ends its sign-ins). A subject no live sign-in explains is dropped; the
 * site gets it back at the agent's next sign-in there. `oidc_subjects_agent_site` serves forgetting
 * an agent's subjects when its grant is revoked or the agent stops.
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema.alterTable('oidc_subjects').renameTo('oidc_subjects_010').execute();
  await db.schema
    .createTable('oidc_subjects')
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('pairwise', 'text', (c) => c.notNull())
    .addColumn('site', 'text', (c) => c.notNull())
    .addColumn('agent_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('oidc_subjects_client_pk', ['client_id', 'pairwise', 'site'])
    .execute();
  await sql`INSERT INTO oidc_subjects (client_id, pairwise, site, agent_id, created_at)
    SELECT DISTINCT s.client_id, o.pairwise, o.site, o.agent_id, o.created_at
    FROM oidc_subjects_010 o JOIN oidc_sign_ins s ON s.site = o.site AND s.agent_id = o.agent_id
    WHERE s.ended_at IS NULL`.execute(db);
  await db.schema.dropTable('oidc_subjects_010').execute();
  await db.schema.createIndex('oidc_subjects_agent_site').on('oidc_subjects').columns(['agent_id', 'site']).execute();
}
