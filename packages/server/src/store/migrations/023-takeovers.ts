import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../ports/index.ts';

/**
 * Take-overs (issue 25, decisions §21). `takeovers` holds one row per session: the agent's relay
 * token only as a SHA-256, the state, and the internal address of the node that relays it (the
 * first node an end connected to; the other end's node forwards there). A partial unique index keeps one open session per agent, on SQLite and PostgreSQL
 * alike. `takeover_reports` holds the sites where a take-over failed, as agents reported them.
 * Frames never reach the database.
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('takeovers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('agent_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('relay_node', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('ended_at', 'bigint')
    .execute();
  await db.schema.createIndex('takeovers_one_open').on('takeovers').column('agent_id').unique().where(sql.ref('state'), '=', sql.lit('open')).execute();
  await db.schema.createIndex('takeovers_user').on('takeovers').columns(['user_id', 'state', 'created_at']).execute();
  await db.schema.createIndex('takeovers_open_expiry').on('takeovers').column('expires_at').where(sql.ref('state'), '=', sql.lit('open')).execute();
  await db.schema
    .createTable('takeover_reports')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('agent_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('site', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('detail', 'text')
    .addColumn('url', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('takeover_reports_user').on('takeover_reports').columns(['user_id', 'created_at']).execute();
}
