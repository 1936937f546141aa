import type { Kysely } from 'kysely';
import type { Dialect } from '../ports.ts';

/** revocation list compaction (decisions §25) — placeholder, filled in by the change that needs it. */
export async function up(_db: Kysely<unknown>, _dialect: Dialect): Promise<void> {}
