import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../ports/index.ts';

/** Access and step-up requests, grants, reports, agent status reports and the activity trail. */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const serial = dialect === 'postgres' ? 'bigserial' : 'integer';
  await db.schema
    .createTable('authz_requests')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('agent_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('site', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('user_info', 'text', (c) => c.notNull())
    .addColumn('action', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('decided_at', 'bigint')
    .addColumn('grant_id', 'text')
    .execute();
  await db.schema.createIndex('authz_requests_user').on('authz_requests').columns(['user_id', 'status']).execute();
  await db.schema.createIndex('authz_requests_agent').on('authz_requests').columns(['agent_id', 'site']).execute();
  // At most one waiting access request per agent and site, decided by the database, not by a read.
  await db.schema
    .createIndex('authz_requests_one_pending')
    .on('authz_requests')
    .columns(['agent_id', 'site'])
    .unique()
    .where(sql.ref('status'), '=', 'pending')
    .where(sql.ref('kind'), '=', 'initial')
    .execute();
  await db.schema
    .createTable('grants')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('agent_id', 'text', (c) => c.notNull())
    .addColumn('site', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('user_info', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint')
    .addColumn('uses_left', 'integer')
    .addColumn('refresh_hash', 'text')
    .addColumn('passes_issued', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('revoked_at', 'bigint')
    .addColumn('rev_seq', 'bigint')
    .execute();
  await db.schema.createIndex('grants_agent_site').on('grants').columns(['agent_id', 'site', 'status']).execute();
  await db.schema.createIndex('grants_user').on('grants').columns(['user_id', 'status']).execute();
  await db.schema
    .createTable('reports')
    .addColumn('agent_id', 'text', (c) => c.notNull())
    .addColumn('site', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('detail', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('reports_pk', ['agent_id', 'site'])
    .execute();
  await db.schema
    .createTable('agent_statuses')
    .addColumn('agent_id', 'text', (c) => c.notNull())
    .addColumn('site', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('agent_statuses_pk', ['agent_id', 'site'])
    .execute();
  await db.schema
    .createTable('activity')
    .addColumn('seq', serial, (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('agent_id', 'text')
    .addColumn('site', 'text')
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('detail', 'text', (c) => c.notNull())
    .addColumn('ip', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('activity_user_seq').on('activity').columns(['user_id', 'seq']).execute();
}
