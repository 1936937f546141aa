import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { Kysely, sql } from 'kysely';
import { migrate } from '../../src/store/migrations/index.ts';
import { kyselyStore } from '../../src/store/kysely-store.ts';
import type { Dialect } from '../../src/store/ports/index.ts';
import type { Database } from '../../src/store/schema.ts';
import { itOnBothDatabases } from './migration-databases.ts';

// Migration 005 numbers the activity records an older release wrote: per owner, in insertion
// order, and the owner's counter continues from there.

async function checkBackfill(db: Kysely<Database>, dialect: Dialect): Promise<void> {
  await migrate(db as Kysely<unknown>, dialect, '004-revocation-window');
  for (let i = 0; i < 7; i++) {
    const user = i % 3 === 0 ? 'u_b' : 'u_a';
    await sql`INSERT INTO activity (user_id, agent_id, site, action, detail, ip, created_at) VALUES (${user}, NULL, NULL, 'old', ${JSON.stringify({ i })}, NULL, ${i})`.execute(db);
  }
  await migrate(db as Kysely<unknown>, dialect);
  const store = kyselyStore(db, dialect);
  const a = await store.activity.list('u_a', { before: 0, limit: 50 });
  assert.deepEqual(a.map((r) => [r.seq, r.detail.i]), [[4, 5], [3, 4], [2, 2], [1, 1]]);
  const b = await store.activity.list('u_b', { before: 0, limit: 50 });
  assert.deepEqual(b.map((r) => [r.seq, r.detail.i]), [[3, 6], [2, 3], [1, 0]]);
  assert.equal(await store.activity.add({ userId: 'u_a', agentId: null, site: null, action: 'new', detail: {}, ip: null, createdAt: 9 }), 5);
  assert.equal(await store.activity.add({ userId: 'u_c', agentId: null, site: null, action: 'new', detail: {}, ip: null, createdAt: 9 }), 1);
}

describe('migration 005: per-owner activity numbers for existing records', () => itOnBothDatabases(checkBackfill));
