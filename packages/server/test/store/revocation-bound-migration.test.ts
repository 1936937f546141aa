import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { Kysely, sql } from 'kysely';
import { migrate } from '../../src/store/migrations/index.ts';
import { kyselyStore } from '../../src/store/kysely-store.ts';
import type { Dialect } from '../../src/store/ports/index.ts';
import type { Database } from '../../src/store/schema.ts';
import { itOnBothDatabases } from './migration-databases.ts';

// Migration 018 dates the flags an older release set at the migration's time: an agent blocked
// before it counts as freshly blocked (never dropped by the list's bound) for one more window.

async function checkBackfill(db: Kysely<Database>, dialect: Dialect): Promise<void> {
  await migrate(db as Kysely<unknown>, dialect, '014-revocation-compaction');
  const insert = (id: string, flag: string) =>
    sql`INSERT INTO agents (id, user_id, name, public_jwk, jkt, status, flag, flag_rev_seq, created_at) VALUES (${id}, 'u_a', 'Bot', '{}', ${`j-${id}`}, 'active', ${flag}, ${flag === 'ok' ? null : 3}, 1)`.execute(db);
  await insert('ag_blocked', 'revoked');
  await insert('ag_suspicious', 'suspicious');
  await insert('ag_fine', 'ok');
  const before = Date.now();
  await migrate(db as Kysely<unknown>, dialect);
  const after = Date.now();
  const rows = await kyselyStore(db, dialect).agents.listRevoked(after, { reason: 'flagged', limit: 10 });
  const at = new Map(rows.map((r) => [r.id, r.flaggedAt]));
  assert.deepEqual([...at.keys()].sort(), ['ag_blocked', 'ag_suspicious']);
  for (const [id, flaggedAt] of at) assert.ok(flaggedAt !== null && flaggedAt >= before && flaggedAt <= after, `${id}: ${flaggedAt}`);
  const fine = await db.selectFrom('agents').select('flagged_at').where('id', '=', 'ag_fine').executeTakeFirstOrThrow();
  assert.equal(fine.flagged_at, null);
}

describe('migration 018: flags set before it are dated at the migration', () => itOnBothDatabases(checkBackfill));
