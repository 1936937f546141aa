import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../ports/index.ts';

/**
 * Operators (issue 24, decisions §17): companies that create agents for many users. Laid out for the
 * whole feature at once, so that consent, connections and operator-created agents need no redesign:
 * - `operators`: the registering user, name, domain (host[:port] of its redirect URIs), redirect URIs
 *   (JSON), browser kind, the secret only as a SHA-256, status (`pending`, `active`, `disabled`), the
 *   public verification token and when the domain was verified.
 * - `operator_connections`: a user's consent to one operator (`cn_`), with the pairwise `sub`, the
 *   agent limit (default 5) and its status; ended connections stay as they were (a new consent makes
 *   a new row).
 * - on `agents`, nullable: the operator and connection that created it, its browser kind, and the
 *   operator switch's block: `status` becomes `blocked` and `operator_blocked_rev_seq` records the
 *   rev_seq of the block, so "on" unblocks exactly the agents an "off" blocked. `agents_blocked_live`
 *   is the revocation list's index of blocked agents (read by id, as `agents_flagged_live`).
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('operators')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('domain', 'text', (c) => c.notNull())
    .addColumn('redirect_uris', 'text', (c) => c.notNull())
    .addColumn('browser', 'text', (c) => c.notNull())
    .addColumn('secret_hash', 'text', (c) => c.notNull())
    .addColumn('secret_set_at', 'bigint', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('verification_token', 'text', (c) => c.notNull())
    .addColumn('verified_at', 'bigint')
    .addColumn('status_changed_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('operators_user').on('operators').columns(['user_id', 'created_at']).execute();
  await db.schema.createIndex('operators_created').on('operators').columns(['created_at', 'id']).execute();

  await db.schema
    .createTable('operator_connections')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('operator_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('sub', 'text', (c) => c.notNull())
    .addColumn('max_agents', 'integer', (c) => c.notNull().defaultTo(5))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('ended_at', 'bigint')
    .execute();
  await db.schema.createIndex('operator_connections_user').on('operator_connections').columns(['user_id', 'created_at']).execute();
  await db.schema.createIndex('operator_connections_operator').on('operator_connections').columns(['operator_id', 'status']).execute();
  // One live connection per operator and user: connecting again while connected is the same consent.
  await db.schema
    .createIndex('operator_connections_one_active')
    .on('operator_connections')
    .columns(['operator_id', 'user_id'])
    .unique()
    .where(sql.ref('status'), '=', sql.lit('active'))
    .execute();

  await db.schema.alterTable('agents').addColumn('operator_id', 'text').execute();
  await db.schema.alterTable('agents').addColumn('connection_id', 'text').execute();
  await db.schema.alterTable('agents').addColumn('browser', 'text').execute();
  await db.schema.alterTable('agents').addColumn('operator_blocked_at', 'bigint').execute();
  await db.schema.alterTable('agents').addColumn('operator_blocked_rev_seq', 'bigint').execute();
  await db.schema.createIndex('agents_operator').on('agents').columns(['operator_id', 'status']).where(sql.ref('operator_id'), 'is not', null).execute();
  await db.schema.createIndex('agents_connection').on('agents').column('connection_id').where(sql.ref('connection_id'), 'is not', null).execute();
  await db.schema.createIndex('agents_blocked_live').on('agents').column('id').where(sql.ref('status'), '=', sql.lit('blocked')).execute();
}
