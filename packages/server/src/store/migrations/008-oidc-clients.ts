import type { Kysely } from 'kysely';
import type { Dialect } from '../ports/index.ts';

/**
 * OIDC clients (decisions §18): the sites an owner registers so that their agents can sign in there.
 * - `redirect_uris` and `verified_origins` are JSON arrays of strings. Redirect URIs are kept exactly
 *   as registered: the authorization endpoint compares them as strings (OAuth 2.1).
 * - `secret_hash` is the SHA-256 (hex) of the client secret; null for a public client. The secret
 *   itself is shown once and never stored.
 * - `verification_token` is published by the site in its well-known file; `verified_origins` are the
 *   origins whose file held it at the last successful check (`verified_at`).
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('oidc_clients')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('redirect_uris', 'text', (c) => c.notNull())
    .addColumn('backchannel_logout_uri', 'text')
    .addColumn('is_public', 'integer', (c) => c.notNull())
    .addColumn('secret_hash', 'text')
    .addColumn('secret_set_at', 'bigint')
    .addColumn('verification_token', 'text', (c) => c.notNull())
    .addColumn('verified_origins', 'text', (c) => c.notNull())
    .addColumn('verified_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('oidc_clients_user').on('oidc_clients').columns(['user_id', 'created_at']).execute();
}
