import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../ports/index.ts';

/**
 * Reaching the owner (decisions §13):
 * - `push_devices`: web-push subscriptions and FCM registrations (passkeys stay in `passkeys`);
 *   `address` is the endpoint or the registration token, unique per kind (upserted by it).
 * - `notifications`: the owner's inbox, numbered by a global `seq` (paged newest first per owner).
 * - `notify_settings`: one row per owner who changed the defaults.
 * - `service_secrets`: secrets the service generates for itself on first start (VAPID keys), kept
 *   like signing keys (encrypted when KEY_ENCRYPTION_KEY is set).
 * - `outbox` becomes the delivery queue: one row per (message, device), claimed by one node at a time
 *   (`locked_by` until `locked_until`), retried at `next_attempt_at`, ended by `sent_at` or `failed_at`.
 *   `topic` groups the rows about one request, so that an answer can cancel its undelivered
 *   approvals and send its dismissals at once. Rows written before this migration were log-only
 *   records: they are closed as sent so the worker never picks them up.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const serial = dialect === 'postgres' ? 'bigserial' : 'integer';
  await db.schema
    .createTable('push_devices')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('p256dh', 'text')
    .addColumn('auth', 'text')
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_used_at', 'bigint')
    .execute();
  await db.schema.createIndex('push_devices_kind_address').on('push_devices').columns(['kind', 'address']).unique().execute();
  await db.schema.createIndex('push_devices_user').on('push_devices').column('user_id').execute();

  await db.schema
    .createTable('notifications')
    .addColumn('seq', serial, (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('read_at', 'bigint')
    .addColumn('txn_id', 'text')
    .addColumn('takeover_id', 'text')
    .execute();
  await db.schema.createIndex('notifications_user_seq').on('notifications').columns(['user_id', 'seq']).execute();
  await db.schema.createIndex('notifications_user_txn').on('notifications').columns(['user_id', 'txn_id']).where(sql.ref('txn_id'), 'is not', null).execute();
  await db.schema.createIndex('notifications_created').on('notifications').column('created_at').execute();

  await db.schema
    .createTable('notify_settings')
    .addColumn('user_id', 'text', (c) => c.primaryKey())
    .addColumn('approvals', 'integer', (c) => c.notNull())
    .addColumn('notes', 'integer', (c) => c.notNull())
    .addColumn('session_notices', 'integer', (c) => c.notNull())
    .addColumn('quiet_start', 'text')
    .addColumn('quiet_end', 'text')
    .addColumn('quiet_tz', 'text')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('service_secrets')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('encrypted', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema.alterTable('outbox').addColumn('device_id', 'text').execute();
  await db.schema.alterTable('outbox').addColumn('topic', 'text').execute();
  await db.schema.alterTable('outbox').addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('outbox').addColumn('next_attempt_at', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('outbox').addColumn('expires_at', 'bigint').execute();
  await db.schema.alterTable('outbox').addColumn('locked_by', 'text').execute();
  await db.schema.alterTable('outbox').addColumn('locked_until', 'bigint').execute();
  await db.schema.alterTable('outbox').addColumn('failed_at', 'bigint').execute();
  await db.schema.alterTable('outbox').addColumn('last_error', 'text').execute();
  await sql`UPDATE outbox SET sent_at = created_at WHERE sent_at IS NULL`.execute(db);
  // Only rows still to send are indexed: the worker's poll reads just those, however long the history.
  await db.schema
    .createIndex('outbox_due')
    .on('outbox')
    .columns(['next_attempt_at', 'id'])
    .where(sql.ref('sent_at'), 'is', null)
    .where(sql.ref('failed_at'), 'is', null)
    .execute();
  await db.schema.createIndex('outbox_topic').on('outbox').column('topic').where(sql.ref('topic'), 'is not', null).execute();
  await db.schema.createIndex('outbox_created').on('outbox').column('created_at').execute();
}
