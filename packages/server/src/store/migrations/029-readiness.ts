import type { Kysely } from 'kysely';
import type { Dialect } from '../ports/index.ts';

/**
 * Readiness checks (decisions §22, issue 26): the last answer of `GET /api/readiness?site=` per site,
 * kept 10 minutes in the shared store so that every node answers the same and a site is fetched at
 * most once per 10 minutes whoever asks. `report` is the answer's JSON; housekeeping deletes rows
 * past `expires_at`.
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('readiness_checks')
    .addColumn('site', 'text', (c) => c.primaryKey())
    .addColumn('report', 'text', (c) => c.notNull())
    .addColumn('checked_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('readiness_checks_expires').on('readiness_checks').column('expires_at').execute();
}
