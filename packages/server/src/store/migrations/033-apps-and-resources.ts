import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../ports/index.ts';

/**
 * Apps as agents, and grants for one resource (decisions §28, issue 30).
 * - `agents.kind`: `agent` (holds a key, signs agent JWTs) or `app` (an MCP client a person approved
 *   in the browser at /oidc/authorize: no key). An app's `public_jwk` and `jkt` are '' (the columns
 *   are NOT NULL and SQLite cannot drop that without rebuilding the table); the repo hands them out
 *   as null, so nothing can read a key from an app.
 * - `agents.client_id`: the OAuth client_id of an app (a `c_`/`rc_` id or a metadata document URL);
 *   null for agents. An owner's second approval of the same client reuses its live app.
 * - `grants.resource`: the resource URL (RFC 8707) an app's grant is for, exactly as approved; the
 *   grant's `site` is its host. Null for every other grant.
 * - `oidc_sign_ins.resource`: the resource a browser sign-in was approved for: the token endpoint
 *   issues resource passes (`aud` = it) from it. Null for agents' sign-ins and plain openid sign-ins.
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema.alterTable('agents').addColumn('kind', 'text', (c) => c.notNull().defaultTo('agent')).execute();
  await db.schema.alterTable('agents').addColumn('client_id', 'text').execute();
  // An owner has at most one live app per client_id: the second approval reuses it, and two racing
  // first approvals (two pending authorizations) cannot make two. A removed app leaves the index,
  // so approving the client again makes a fresh one.
  await db.schema
    .createIndex('agents_live_app')
    .on('agents')
    .columns(['user_id', 'client_id'])
    .unique()
    .where(sql.ref('client_id'), 'is not', null)
    .where(sql.ref('status'), '<>', sql.lit('removed'))
    .execute();
  await db.schema.alterTable('grants').addColumn('resource', 'text').execute();
  await db.schema.alterTable('oidc_sign_ins').addColumn('resource', 'text').execute();
}
