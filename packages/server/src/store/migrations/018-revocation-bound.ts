import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../ports/index.ts';

/**
 * The revocation list's bound across accounts (domain/revocation/revocation-bound.ts) needs to know
 * which listed agents refuse no pass that can still be alive: a block set more than 600 s + 120 s ago
 * refuses only passes minted before it, all expired. Agents remember when their current non-ok flag
 * was set (`flagged_at`, written with `flag_rev_seq`; null while the flag is `ok`).
 *
 * Agents flagged before this migration get the migration's time: we do not know when they were
 * blocked, so each counts as freshly blocked (never dropped by the bound) for one window, the safe
 * side, and becomes droppable 720 s later.
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema.alterTable('agents').addColumn('flagged_at', 'bigint').execute();
  await sql`update agents set flagged_at = ${Date.now()} where flag <> 'ok'`.execute(db);
}
