import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** Where the PostgreSQL suites run. CI sets nothing: the machine's server on 127.0.0.1 is used. */
export const PG_ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * Creates an empty database for one test file and returns its URL and a dropper. Fails (never skips)
 * when PostgreSQL is unreachable: the PostgreSQL suites are part of the test command.
 */
export async function freshPostgresDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `mandate_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  try {
    await admin.connect();
  } catch (e) {
    throw new Error(`PostgreSQL is unreachable at ${PG_ADMIN_URL} (set TEST_DATABASE_URL): ${(e as Error).message}`);
  }
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: PG_ADMIN_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}
