import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { Kysely, sql } from 'kysely';
import { migrate } from '../../src/store/migrations/index.ts';
import { kyselyStore } from '../../src/store/kysely-store.ts';
import type { Dialect } from '../../src/store/ports/index.ts';
import type { Database } from '../../src/store/schema.ts';
import { itOnBothDatabases } from './migration-databases.ts';

// Migration 016 binds the subjects of migration 010 (known per site) to the clients that hold a
// live sign-in of that agent at that site; the rest are dropped.

async function signIn(db: Kysely<Database>, sid: string, clientId: string, agentId: string, site: string, endedAt: number | null): Promise<void> {
  await sql`INSERT INTO oidc_sign_ins (sid, client_id, user_id, agent_id, grant_id, site, scopes, amr, auth_time, refresh_hash, created_at, expires_at, ended_at, refresh_count)
    VALUES (${sid}, ${clientId}, 'u_1', ${agentId}, 'gr_1', ${site}, '["openid"]', '["agent"]', 1, 'h', 1, 9999999999999, ${endedAt}, 0)`.execute(db);
}

async function checkBinding(db: Kysely<Database>, dialect: Dialect): Promise<void> {
  await migrate(db as Kysely<unknown>, dialect, '014-revocation-compaction');
  for (const [site, pairwise, agent] of [['shop.example', 'pw-a', 'ag_a'], ['shop.example', 'pw-b', 'ag_b'], ['mall.example', 'pw-c', 'ag_a']]) {
    await sql`INSERT INTO oidc_subjects (site, pairwise, agent_id, created_at) VALUES (${site}, ${pairwise}, ${agent}, 5)`.execute(db);
  }
  await signIn(db, 's1', 'c_real', 'ag_a', 'shop.example', null);
  await signIn(db, 's2', 'c_real', 'ag_a', 'shop.example', null); // two sign-ins, one row
  await signIn(db, 's3', 'c_second', 'ag_a', 'shop.example', null);
  await signIn(db, 's4', 'c_real', 'ag_b', 'shop.example', 7); // ended (its grant revoked): dropped
  await migrate(db as Kysely<unknown>, dialect);
  const store = kyselyStore(db, dialect);
  assert.deepEqual(await store.oidcSubjects.find('c_real', 'pw-a'), { site: 'shop.example', agentId: 'ag_a' });
  assert.deepEqual(await store.oidcSubjects.find('c_second', 'pw-a'), { site: 'shop.example', agentId: 'ag_a' });
  assert.equal(await store.oidcSubjects.find('c_other', 'pw-a'), undefined, 'a client that had no sign-in there');
  assert.equal(await store.oidcSubjects.find('c_real', 'pw-b'), undefined, 'the sign-in ended');
  assert.equal(await store.oidcSubjects.find('c_real', 'pw-c'), undefined, 'no sign-in at that site');
  const rows = await sql<{ n: number }>`SELECT COUNT(*) AS n FROM oidc_subjects`.execute(db);
  assert.equal(Number(rows.rows[0]?.n), 2);
}

describe('migration 016: CIBA subjects bound to the clients that received them', () => itOnBothDatabases(checkBinding));
