import type { Kysely } from 'kysely';
import type { Dialect } from '../ports/index.ts';

/**
 * Sessions remember how they were made ('password' or 'passkey'): adding or removing passkeys, once
 * an owner has one, needs a passkey session, so a phished password cannot enrol the attacker's key.
 * Sessions made before this migration count as password sessions (the safe side).
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema.alterTable('sessions').addColumn('method', 'text', (c) => c.notNull().defaultTo('password')).execute();
}
