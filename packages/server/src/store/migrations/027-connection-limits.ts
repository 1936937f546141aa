import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../ports/index.ts';

/**
 * Connection limits and the operator API (issue 24, decisions §17):
 * - on `agents`, the owner's suspension: when the owner lowers a connection's `max_agents` below its
 *   count, the newest agents beyond it become `suspended`; `suspended_rev_seq` records the rev_seq of
 *   the suspension, so that raising the limit lifts it like an unblock (`unblocked_rev_seq` takes it
 *   and passes minted before it stay refused). `agents_suspended_live` is the revocation list's index
 *   of suspended agents (read by id, as `agents_blocked_live`).
 * - `operator_connections_operator_created`: an operator's connections newest first (its API lists them).
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema.alterTable('agents').addColumn('suspended_at', 'bigint').execute();
  await db.schema.alterTable('agents').addColumn('suspended_rev_seq', 'bigint').execute();
  await db.schema.createIndex('agents_suspended_live').on('agents').column('id').where(sql.ref('status'), '=', sql.lit('suspended')).execute();
  await db.schema.createIndex('operator_connections_operator_created').on('operator_connections').columns(['operator_id', 'created_at']).execute();
}
