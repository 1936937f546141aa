import type { Kysely } from 'kysely';
import type { Dialect } from '../ports/index.ts';

/**
 * Email verification (decisions §25):
 * - `users.email_verified_at`: when the current address was proven by a link; null until then, and
 *   null again whenever the address changes.
 * - `email_tokens`: the links mailed to owners, keyed by the SHA-256 (hex) of the token (the token
 *   itself is never stored). Each is bound to the account AND the address it was sent to, so a link
 *   to an old address cannot verify a new one; `purpose` says what it does (`verify_email`,
 *   `undo_passkey` with `subject` the passkey's id); `used_at` makes it single-use (one conditional
 *   UPDATE ... RETURNING). Indexed by owner (outstanding links end when the address changes) and by
 *   expiry (housekeeping).
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema.alterTable('users').addColumn('email_verified_at', 'bigint').execute();
  await db.schema
    .createTable('email_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('subject', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema.createIndex('email_tokens_user').on('email_tokens').columns(['user_id', 'purpose']).execute();
  await db.schema.createIndex('email_tokens_expires').on('email_tokens').columns(['expires_at']).execute();
}
