import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../ports/index.ts';

/**
 * The revocation list compacts (decisions §25): an entry is listed only while a pass it refuses can
 * still be alive, i.e. for 600 s + 120 s after the revocation, removal or unblock
 * (domain/revocation/revocation-window.ts); only a still-blocked agent stays for good.
 *
 * The indexes of migration 006 held every revoked grant and every removed agent ever made, so the
 * snapshot read grew with history (one owner revoking 30 000 made-up sites kept them listed for
 * ever). The snapshot's reads now name the times, and each reads its rows in pages, each page one
 * range of one partial index (keyset paging: a page starts after the last key of the one before):
 * - `grants_revoked_at` (revoked_at, id) WHERE revoked_at IS NOT NULL: grants revoked in the window,
 *   also those superseded since (revoking writes revoked_at, nothing clears it);
 * - `agents_removed_at` (removed_at, id) WHERE removed_at IS NOT NULL: tombstones of the window;
 * - `agents_unblocked_at` (unblocked_at, id) WHERE unblocked_at IS NOT NULL: lifted blocks of the
 *   window (replaces `agents_unblocked` of migration 006, which could not page);
 * - `agents_flagged_live` (id) WHERE flag <> 'ok' AND status = 'active': agents flagged now, which
 *   stay listed while flagged, by id; a removed agent leaves this index (its tombstone ages out).
 * Every path that sets a grant's status `revoked` or an agent's `removed` has written its time in
 * the same statement since migration 001, so no row lacks the time its entry ages out by.
 *
 * The indexes of migration 006 that no query reads any more are dropped (each write of a grant or
 * agent kept them up to date).
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema.createIndex('grants_revoked_at').on('grants').columns(['revoked_at', 'id']).where(sql.ref('revoked_at'), 'is not', null).execute();
  await db.schema.createIndex('agents_removed_at').on('agents').columns(['removed_at', 'id']).where(sql.ref('removed_at'), 'is not', null).execute();
  await db.schema.createIndex('agents_unblocked_at').on('agents').columns(['unblocked_at', 'id']).where(sql.ref('unblocked_at'), 'is not', null).execute();
  await db.schema
    .createIndex('agents_flagged_live')
    .on('agents')
    .column('id')
    .where(sql.ref('flag'), '<>', sql.lit('ok'))
    .where(sql.ref('status'), '=', sql.lit('active'))
    .execute();
  for (const name of ['agents_flagged', 'agents_removed', 'agents_unblocked', 'grants_revoked', 'grants_superseded_after_revocation']) {
    await db.schema.dropIndex(name).ifExists().execute();
  }
}
