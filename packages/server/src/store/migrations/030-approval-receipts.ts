import type { Kysely } from 'kysely';
import type { Dialect } from '../ports/index.ts';

/**
 * Approvals that can be proved (decisions §29, issue 29):
 * - a step-up or agent approval may be bound to details: `details_summary` (shown on the card as
 *   written) and `details_digest` (base64url SHA-256 of their JCS form), both or neither;
 * - the passkey challenge of such an approval commits to a random `nonce`, kept with the challenge;
 * - `approval_receipts`: what the owner's passkey signed, one row per approved request, written in
 *   the approval's transaction (ports/receipts.ts describes each column).
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema.alterTable('authz_requests').addColumn('details_summary', 'text').execute();
  await db.schema.alterTable('authz_requests').addColumn('details_digest', 'text').execute();
  await db.schema.alterTable('webauthn_challenges').addColumn('nonce', 'text').execute();
  await db.schema
    .createTable('approval_receipts')
    .addColumn('txn_id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('agent_id', 'text', (c) => c.notNull())
    .addColumn('site', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('details_digest', 'text')
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('approved_at', 'bigint', (c) => c.notNull())
    .addColumn('credential_id', 'text', (c) => c.notNull())
    .addColumn('authenticator_data', 'text', (c) => c.notNull())
    .addColumn('client_data_json', 'text', (c) => c.notNull())
    .addColumn('signature', 'text', (c) => c.notNull())
    .execute();
  // The export pages an owner's receipts in txn id order; deletion removes them by owner.
  await db.schema.createIndex('approval_receipts_user').on('approval_receipts').columns(['user_id', 'txn_id']).execute();
}
