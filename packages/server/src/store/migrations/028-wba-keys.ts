import type { Kysely } from 'kysely';
import type { Dialect } from '../ports/index.ts';

/**
 * Web Bot Auth keys (issue 26, decisions §22): one Ed25519 public key per agent, published in a key
 * directory at the agent's address (`label`, stable per agent across key changes). `kid` is the
 * key's RFC 7638 thumbprint, unique: one key belongs to one agent. The `proof_*` columns hold the
 * directory response's signature headers the agent uploaded for the current key (null until then).
 * Public material only: the private key never leaves the agent.
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('wba_keys')
    .addColumn('agent_id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('label', 'text', (c) => c.notNull().unique())
    .addColumn('kid', 'text', (c) => c.notNull().unique())
    .addColumn('x', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('proof_content_digest', 'text')
    .addColumn('proof_signature_input', 'text')
    .addColumn('proof_signature', 'text')
    .addColumn('proof_expires_at', 'bigint')
    .execute();
  await db.schema.createIndex('wba_keys_user').on('wba_keys').column('user_id').execute();
}
