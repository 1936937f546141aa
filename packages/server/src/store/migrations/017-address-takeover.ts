import type { Kysely } from 'kysely';
import type { Dialect } from '../ports/index.ts';

/**
 * Address take-over (issue 22, hardening): `email_claims` holds the links mailed to an address that
 * an account which never verified it holds, so that whoever reads that address's mail can take it.
 * Keyed by the SHA-256 (hex) of the link's token; single-use by `used_at`; 24 hours. A sign-up claim
 * carries the new account's password hash (confirming needs that password too) and name: the
 * account is made only when the link is used, so nobody owns a half-made account meanwhile.
 * Indexed by expiry (housekeeping).
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('email_claims')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('display_name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema.createIndex('email_claims_expires').on('email_claims').columns(['expires_at']).execute();
}
