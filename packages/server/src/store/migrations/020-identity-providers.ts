import type { Kysely } from 'kysely';
import type { Dialect } from '../ports/index.ts';

/**
 * Identity providers (decisions §15). `oauth_identities` links an identity (issuer + subject) to one
 * account: the primary key makes an identity link to at most one account, and the unique
 * (user_id, provider) gives an owner at most one identity per provider. `oauth_states` holds each
 * flow under way (sign-in, link, approval), keyed by the SHA-256 of its `state`; single-use by
 * `used_at`, ten minutes. Both indexed for housekeeping and deletion.
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('oauth_identities')
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('oauth_identities_pk', ['issuer', 'subject'])
    .addUniqueConstraint('oauth_identities_user_provider', ['user_id', 'provider'])
    .execute();
  await db.schema
    .createTable('oauth_states')
    .addColumn('state_hash', 'text', (c) => c.primaryKey())
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text')
    .addColumn('txn_id', 'text')
    .addColumn('limits', 'text')
    .addColumn('browser_hash', 'text')
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('code_verifier', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema.createIndex('oauth_states_expires').on('oauth_states').columns(['expires_at']).execute();
  await db.schema.createIndex('oauth_states_user').on('oauth_states').columns(['user_id']).execute();
}
