import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../ports/index.ts';

/**
 * Indexes found missing by the scale benchmarks (bench/, 1M agents, grants and activity records).
 *
 * The revocation snapshot lists a few thousand entries out of possibly millions of agents and grants;
 * without these, building it read both tables whole.
 * One small partial index per branch of the snapshot's queries (agents.listRevoked,
 * grants.listRevoked), each holding only rows that can be listed, so both SQLite (multi-index OR)
 * and PostgreSQL (bitmap OR) read just those. The queries spell the same constants as literals.
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema.createIndex('agents_flagged').on('agents').column('flag').where(sql.ref('flag'), '<>', sql.lit('ok')).execute();
  await db.schema.createIndex('agents_removed').on('agents').column('status').where(sql.ref('status'), '=', sql.lit('removed')).execute();
  await db.schema.createIndex('agents_unblocked').on('agents').column('unblocked_at').where(sql.ref('unblocked_at'), 'is not', null).execute();
  await db.schema.createIndex('grants_revoked').on('grants').columns(['rev_seq', 'id']).where(sql.ref('status'), '=', sql.lit('revoked')).execute();
  await db.schema
    .createIndex('grants_superseded_after_revocation')
    .on('grants')
    .column('superseded_at')
    .where(sql.ref('status'), '=', sql.lit('superseded'))
    .where(sql.ref('revoked_at'), 'is not', null)
    .execute();
  // The owner's activity of one agent (GET /api/activity?agent=): without it, an agent with few or no
  // records made the page read the owner's whole trail (numbered by owner_seq, migration 005).
  await db.schema.createIndex('activity_user_agent_seq').on('activity').columns(['user_id', 'agent_id', 'owner_seq']).execute();
}
