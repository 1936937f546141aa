import type { Kysely } from 'kysely';
import type { Dialect } from '../ports/index.ts';

/**
 * Agent-initiated approvals and approval modes (decisions §19):
 * - a request of kind `agent_approval` keeps the details the agent described (label, amount, hosts,
 *   ...) as JSON, for the owner's card, the category and the approval modes; null for other kinds;
 * - `approval_modes`: one row per agent and site (a host, or `*` for the agent's default);
 * - `approval_pause_scopes`: per agent, whether a denial pauses automatic approvals for the host or
 *   its whole domain (no row: `domain`).
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema.alterTable('authz_requests').addColumn('details', 'text').execute();
  await db.schema
    .createTable('approval_modes')
    .addColumn('agent_id', 'text', (c) => c.notNull())
    .addColumn('site', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('hourly_limit', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('approval_modes_pk', ['agent_id', 'site'])
    .execute();
  await db.schema
    .createTable('approval_pause_scopes')
    .addColumn('agent_id', 'text', (c) => c.primaryKey())
    .addColumn('pause_scope', 'text', (c) => c.notNull())
    .execute();
}
