import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../ports/index.ts';

/**
 * One account cannot delay or drop every other owner's pushes (issue 22, docs/operations/push.md
 * "The outbox"):
 * - `push_devices.failures`, `push_devices.damped_until`: a device whose sends keep failing
 *   (timeouts, network errors, 5xx) is skipped until `damped_until`, for longer each time; a
 *   delivered push sets both back. Recorded on the device, so every node sees it.
 * - `outbox_owner_pending` (user_id, kind, id) WHERE unsent: an owner's undelivered messages of one
 *   kind, read by the note budget (the oldest notes beyond it are dropped) without a scan of the queue.
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema.alterTable('push_devices').addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('push_devices').addColumn('damped_until', 'bigint').execute();
  await db.schema
    .createIndex('outbox_owner_pending')
    .on('outbox')
    .columns(['user_id', 'kind', 'id'])
    .where(sql.ref('sent_at'), 'is', null)
    .where(sql.ref('failed_at'), 'is', null)
    .execute();
}
