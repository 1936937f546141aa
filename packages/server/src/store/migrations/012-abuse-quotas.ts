import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../ports/index.ts';

/**
 * Quotas and purges (decisions §25):
 * - `authz_requests_open` (user_id, expires_at) WHERE status = 'pending': an owner's open requests
 *   and the soonest of their expiries (the open-requests quota and its `retry_after`) are one index
 *   range, however many answered requests the owner has.
 * - `authz_requests_expires` (expires_at): the housekeeping sweep that marks stale requests expired,
 *   and the purge of requests that ended a week ago, read a range instead of the whole table.
 * - `outbox_sent`, `outbox_failed`: the purge of delivered and given-up messages, one range each
 *   (partial: rows still waiting carry neither time).
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema
    .createIndex('authz_requests_open')
    .on('authz_requests')
    .columns(['user_id', 'expires_at'])
    .where(sql.ref('status'), '=', sql.lit('pending'))
    .execute();
  await db.schema.createIndex('authz_requests_expires').on('authz_requests').column('expires_at').execute();
  await db.schema.createIndex('outbox_sent').on('outbox').column('sent_at').where(sql.ref('sent_at'), 'is not', null).execute();
  await db.schema.createIndex('outbox_failed').on('outbox').column('failed_at').where(sql.ref('failed_at'), 'is not', null).execute();
}
