import { type Kysely, type Migration, Migrator } from 'kysely';
import type { Dialect } from '../ports.ts';
import * as foundation from './001-foundation.ts';
import * as protocol from './002-protocol.ts';
import * as sessionMethod from './003-session-method.ts';
import * as revocationWindow from './004-revocation-window.ts';

type DialectMigration = { up(db: Kysely<unknown>, dialect: Dialect): Promise<void> };

/** Ordered by name; append, never edit a migration that has shipped. */
const MIGRATIONS: Record<string, DialectMigration> = {
  '001-foundation': foundation,
  '002-protocol': protocol,
  '003-session-method': sessionMethod,
  '004-revocation-window': revocationWindow,
};

/**
 * Applies pending migrations. Kysely's migrator takes a lock table first, so two nodes starting
 * together over one PostgreSQL database apply each migration once.
 */
export async function migrate(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const migrations: Record<string, Migration> = {};
  for (const [name, m] of Object.entries(MIGRATIONS)) migrations[name] = { up: (d) => m.up(d, dialect) };
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`database migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}
