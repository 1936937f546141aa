import type { Kysely } from 'kysely';
import type { Dialect } from '../ports/index.ts';

/**
 * A revocation must not vanish from the snapshot the moment it is lifted: a local verifier would
 * then accept the old passes again (up to one pass lifetime), while cloud verify refuses them.
 * Grants remember when a newer approval superseded them; agents remember when their block was
 * lifted and the rev_seq of that block, so their entries can stay listed for one pass lifetime.
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema.alterTable('grants').addColumn('superseded_at', 'bigint').execute();
  await db.schema.alterTable('agents').addColumn('unblocked_at', 'bigint').execute();
  await db.schema.alterTable('agents').addColumn('unblocked_rev_seq', 'bigint').execute();
}
