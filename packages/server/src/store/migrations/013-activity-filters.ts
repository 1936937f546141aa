import type { Kysely } from 'kysely';
import type { Dialect } from '../ports.ts';

/** activity filter columns and indexes — placeholder, filled in by the change that needs it. */
export async function up(_db: Kysely<unknown>, _dialect: Dialect): Promise<void> {}
