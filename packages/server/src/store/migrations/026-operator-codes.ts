import type { Kysely } from 'kysely';
import type { Dialect } from '../ports/index.ts';

/**
 * Operator authorization codes (decisions §17): what the consent gives the operator's redirect URI,
 * exchanged once within 60 s at `POST /api/v1/operator/token`. Only a SHA-256 of the code is kept.
 * `used_at` is set by the one conditional UPDATE that spends it; `connection_id` records the
 * connection the exchange answered, so a reuse of the spent code can end exactly that connection.
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('operator_codes')
    .addColumn('code_hash', 'text', (c) => c.primaryKey())
    .addColumn('operator_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('code_challenge', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .addColumn('connection_id', 'text')
    .execute();
  await db.schema.createIndex('operator_codes_user').on('operator_codes').column('user_id').execute();
  await db.schema.createIndex('operator_codes_expires').on('operator_codes').column('expires_at').execute();
}
