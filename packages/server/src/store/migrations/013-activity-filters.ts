import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../ports/index.ts';

/**
 * One index per filter combination of the owner's activity trail (GET /api/activity: `agent`, `site`,
 * `action`, alone or together; issue 14, item 6).
 *
 * A page is `WHERE user_id = ? [AND agent_id = ?] [AND site = ?] [AND action = ?] [AND key < ?]
 * ORDER BY key DESC LIMIT n`. It reads only the n rows it answers when an index holds exactly the
 * filtered columns (equalities) and then the order key: the read starts at the right place and walks
 * the index backwards. Without one, the database walks another index and drops what does not match: a
 * filter matching 1 record in 100 000 read the owner's whole trail per page, on SQLite on the event
 * loop (13-26 ms at 34k records, growing with the trail). An index for one filter cannot serve two
 * together (an agent's records in order are not that agent's records for one site in order), and a
 * filter rarely matched within another (an agent's notes among its passes) would be read the same slow
 * way, so every combination has its own.
 *
 * The order key is `owner_seq` without filters and `owner_seq + n` with n filters (same order; see
 * repos/activity-filter-index.ts): an index made for a part of the filters cannot give a page's
 * order, so PostgreSQL's planner cannot pick it over the page's own index on a misleading estimate.
 * That is why the one-agent index of migration 006 (on plain owner_seq) is built again here.
 * `activity_user_owner_seq` (migration 005) stays the no-filter index.
 *
 * What it costs: each record goes into 6 more indexes (5 more B-tree inserts per record, with the
 * unused `activity_user_seq` dropped below: it has served no query since pages follow the owner's
 * number), and each index takes about the size of the columns it holds. Built inside the migration's
 * transaction: on a large trail, writes to `activity` wait at start-up until they are built, once.
 */
const INDEXES: readonly (readonly [name: string, columns: string])[] = [
  ['activity_user_agent_seq', 'user_id, agent_id, (owner_seq + 1)'],
  ['activity_user_site_seq', 'user_id, site, (owner_seq + 1)'],
  ['activity_user_action_seq', 'user_id, action, (owner_seq + 1)'],
  ['activity_user_agent_site_seq', 'user_id, agent_id, site, (owner_seq + 2)'],
  ['activity_user_agent_action_seq', 'user_id, agent_id, action, (owner_seq + 2)'],
  ['activity_user_site_action_seq', 'user_id, site, action, (owner_seq + 2)'],
  ['activity_user_agent_site_action_seq', 'user_id, agent_id, site, action, (owner_seq + 3)'],
];

export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema.dropIndex('activity_user_seq').ifExists().execute();
  await db.schema.dropIndex('activity_user_agent_seq').ifExists().execute();
  for (const [name, columns] of INDEXES) await sql`CREATE INDEX ${sql.id(name)} ON activity (${sql.raw(columns)})`.execute(db);
}
