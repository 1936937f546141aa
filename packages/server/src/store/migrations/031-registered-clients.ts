import type { Kysely } from 'kysely';
import type { Dialect } from '../ports/index.ts';

/**
 * Clients that registered themselves (RFC 7591, decisions §28): public MCP clients without an owner.
 * A table of their own rather than a nullable owner on `oidc_clients`: everything that reads
 * `oidc_clients` (the owner's list, verification, readiness, export, account deletion) is about an
 * owner's sites, and an anonymous registration must never appear there; and SQLite cannot drop the
 * NOT NULL of `user_id` without rebuilding the table. `redirect_uris` is a JSON array of strings,
 * kept exactly as registered (compared as strings at the authorization endpoint).
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('oidc_registered_clients')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('redirect_uris', 'text', (c) => c.notNull())
    .addColumn('client_uri', 'text')
    .addColumn('logo_uri', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
}
