import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { Kysely, sql } from 'kysely';
import { migrate } from '../../src/store/migrations/index.ts';
import { kyselyStore } from '../../src/store/kysely-store.ts';
import type { Dialect } from '../../src/store/ports/index.ts';
import type { Database } from '../../src/store/schema.ts';
import { itOnBothDatabases } from './migration-databases.ts';

// Migration 025: agents an operator made before it (operator-run browser or not) start with the
// password manager off, so no secret reaches an operator's computers until the owner says so.

async function checkDefault(db: Kysely<Database>, dialect: Dialect): Promise<void> {
  await migrate(db as Kysely<unknown>, dialect, '024-operators');
  const insert = (id: string, browser: string | null) =>
    sql`INSERT INTO agents (id, user_id, name, public_jwk, jkt, status, flag, created_at, browser) VALUES (${id}, 'u_a', 'Bot', '{}', ${`j-${id}`}, 'active', 'ok', 1, ${browser})`.execute(db);
  await insert('ag_operator', 'operator');
  await insert('ag_user', 'user');
  await insert('ag_plain', null);
  await migrate(db as Kysely<unknown>, dialect);
  const agents = kyselyStore(db, dialect).agents;
  assert.deepEqual(await agents.passwordManager('ag_operator'), { browser: 'operator', enabled: false });
  assert.deepEqual(await agents.passwordManager('ag_user'), { browser: 'user', enabled: false });
  assert.deepEqual(await agents.passwordManager('ag_plain'), { browser: null, enabled: false });
}

describe('migration 025: agents made before it have the password manager off', () => itOnBothDatabases(checkDefault));
