import type { Kysely } from 'kysely';
import type { Dialect } from '../ports/index.ts';

/**
 * OIDC sign-ins (decisions §18): one row per `sid`. `refresh_hash` is the SHA-256 (hex) of the live
 * refresh token (the token itself is never stored); rotation is a compare-and-set on it. `scopes`
 * and `amr` are JSON arrays of strings.
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('oidc_sign_ins')
    .addColumn('sid', 'text', (c) => c.primaryKey())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('agent_id', 'text', (c) => c.notNull())
    .addColumn('grant_id', 'text', (c) => c.notNull())
    .addColumn('site', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('amr', 'text', (c) => c.notNull())
    .addColumn('auth_time', 'bigint', (c) => c.notNull())
    .addColumn('refresh_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('ended_at', 'bigint')
    .execute();
  await db.schema.createIndex('oidc_sign_ins_grant').on('oidc_sign_ins').columns(['grant_id']).execute();
}
