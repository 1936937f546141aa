import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../ports/index.ts';

/**
 * What many nodes and crashes need:
 * - `leases`: one row per background job; the node named in `holder` runs it until `expires_at`.
 * - `activity.owner_seq`: each owner's records numbered 1, 2, 3... in the writing transaction (the
 *   counter lives in `counters` as `activity:<user id>`). The global `seq` is a database sequence,
 *   which PostgreSQL advances even for rolled-back inserts; the owner's number never skips.
 * Existing records are numbered in their insertion order and the counters set to match.
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('leases')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('holder', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.alterTable('activity').addColumn('owner_seq', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
  await sql`UPDATE activity SET owner_seq = (SELECT COUNT(*) FROM activity AS earlier WHERE earlier.user_id = activity.user_id AND earlier.seq <= activity.seq)`.execute(db);
  await sql`INSERT INTO counters (name, value) SELECT 'activity:' || user_id, MAX(owner_seq) FROM activity GROUP BY user_id`.execute(db);
  await db.schema.createIndex('activity_user_owner_seq').on('activity').columns(['user_id', 'owner_seq']).unique().execute();
}
