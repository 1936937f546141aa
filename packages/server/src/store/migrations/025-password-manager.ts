import type { Kysely } from 'kysely';
import type { Dialect } from '../ports/index.ts';

/**
 * The password-manager switch (issue 24, decisions §17): `agents.password_manager` is 1 while the
 * owner lets an agent whose browser runs on its operator's computers (`browser` = `operator`) use
 * the password manager. Off (0) by default, so an operator-run browser fills no secret until the
 * owner turns it on; for other agents the column is not read (their status says `not_applicable`).
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema.alterTable('agents').addColumn('password_manager', 'integer', (c) => c.notNull().defaultTo(0)).execute();
}
