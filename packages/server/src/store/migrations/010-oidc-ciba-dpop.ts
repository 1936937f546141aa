import type { Kysely } from 'kysely';
import type { Dialect } from '../ports/index.ts';

/**
 * The rest of the OIDC provider (decisions §12, §18):
 * - `authz_requests.oidc`: what an access request filed by a sign-in shows the owner (JSON: client,
 *   verified or not, the flow, a CIBA `binding_message` as written); null for other requests.
 * - `oidc_sign_ins.dpop_jkt`: the key a DPoP-bound sign-in's tokens are bound to (RFC 9449); its
 *   refresh tokens need a proof of that key. `refresh_window_at` / `refresh_count`: the refreshes of
 *   the current window, so one statement rotates and limits. `user_id` indexed for the owner's list.
 * - `oidc_subjects`: the pairwise `act.sub` a site was given for an agent, so CIBA can find the agent
 *   named by `login_hint` (the HMAC cannot be reversed).
 * - `oidc_ciba`: CIBA requests in poll mode, keyed by the SHA-256 of `auth_req_id`; `interval_sec`
 *   grows by 5 at each `slow_down`; `consumed_at` makes the tokens single-use.
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema.alterTable('authz_requests').addColumn('oidc', 'text').execute();
  await db.schema.alterTable('oidc_sign_ins').addColumn('dpop_jkt', 'text').execute();
  // The per-sign-in refresh limit, kept on the row so the rotation's compare-and-set checks it too.
  await db.schema.alterTable('oidc_sign_ins').addColumn('refresh_window_at', 'bigint').execute();
  await db.schema.alterTable('oidc_sign_ins').addColumn('refresh_count', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.createIndex('oidc_sign_ins_user').on('oidc_sign_ins').columns(['user_id']).execute();
  await db.schema.createIndex('oidc_sign_ins_agent').on('oidc_sign_ins').columns(['agent_id']).execute();
  await db.schema
    .createTable('oidc_subjects')
    .addColumn('site', 'text', (c) => c.notNull())
    .addColumn('pairwise', 'text', (c) => c.notNull())
    .addColumn('agent_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('oidc_subjects_pk', ['site', 'pairwise'])
    .execute();
  await db.schema.createIndex('oidc_subjects_agent').on('oidc_subjects').columns(['agent_id']).execute();
  await db.schema
    .createTable('oidc_ciba')
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('txn_id', 'text', (c) => c.notNull())
    .addColumn('agent_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('site', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('interval_sec', 'integer', (c) => c.notNull())
    .addColumn('last_poll_at', 'bigint')
    .addColumn('consumed_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('oidc_ciba_expires').on('oidc_ciba').columns(['expires_at']).execute();
}
