import type { Kysely } from 'kysely';
import type { Dialect } from '../ports/index.ts';

/**
 * Plans (issue 25, decisions §20). `plans` holds one scheduled task's plan with its window and the
 * status of its card (`txn_id`, a request of kind `plan`); `plan_steps` one row per step, with the
 * digests of its texts (JSON list), the earlier steps it waits for (JSON list), whether the owner
 * pre-approved it and the uses left, taken by one conditional UPDATE each.
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('plans')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('agent_id', 'text', (c) => c.notNull())
    .addColumn('txn_id', 'text', (c) => c.notNull().unique())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('start_at', 'bigint', (c) => c.notNull())
    .addColumn('end_at', 'bigint', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('decided_at', 'bigint')
    .execute();
  await db.schema.createIndex('plans_agent_end').on('plans').columns(['agent_id', 'end_at']).execute();
  await db.schema.createIndex('plans_user').on('plans').columns(['user_id']).execute();
  await db.schema
    .createTable('plan_steps')
    .addColumn('plan_id', 'text', (c) => c.notNull())
    .addColumn('step_id', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('host', 'text', (c) => c.notNull())
    .addColumn('path', 'text')
    .addColumn('button', 'text', (c) => c.notNull())
    .addColumn('category', 'text', (c) => c.notNull())
    .addColumn('text_digests', 'text', (c) => c.notNull())
    .addColumn('after_ids', 'text', (c) => c.notNull())
    .addColumn('uses', 'integer', (c) => c.notNull())
    .addColumn('uses_left', 'integer', (c) => c.notNull())
    .addColumn('approved', 'integer', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addPrimaryKeyConstraint('plan_steps_pk', ['plan_id', 'step_id'])
    .execute();
  await db.schema
    .createTable('plan_uses')
    .addColumn('txn_id', 'text', (c) => c.primaryKey())
    .addColumn('plan_id', 'text', (c) => c.notNull())
    .addColumn('step_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('plan_uses_plan').on('plan_uses').columns(['plan_id']).execute();
}
