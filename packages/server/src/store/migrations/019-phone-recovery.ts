import type { Kysely } from 'kysely';
import type { Dialect } from '../ports/index.ts';

/**
 * Phone and recovery (issue 23, decisions §14). `phone_codes` holds the SMS codes that verify a
 * phone or start a recovery: only SHA-256 hashes, a try counter decremented by one conditional
 * UPDATE (5 tries, then void), 10 minutes, single-use by `used_at`. `user_id` is null for a
 * recovery start that matched no account (written anyway, so both answers cost the same). The
 * `users.phone` and `users.phone_verified` columns exist since 001. `recovery_codes` holds the
 * owner's one-time recovery codes, hashed; regenerating replaces the whole set.
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('phone_codes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text')
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('phone', 'text', (c) => c.notNull())
    .addColumn('code_hash', 'text', (c) => c.notNull())
    .addColumn('attempts_left', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema.createIndex('phone_codes_user').on('phone_codes').columns(['user_id', 'purpose', 'created_at']).execute();
  await db.schema.createIndex('phone_codes_expires').on('phone_codes').columns(['expires_at']).execute();
  await db.schema
    .createTable('recovery_codes')
    .addColumn('code_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema.createIndex('recovery_codes_user').on('recovery_codes').columns(['user_id']).execute();
}
