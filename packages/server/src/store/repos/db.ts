import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../schema.ts';

/** A connection or a transaction: repositories work the same on both. */
export type Db = Kysely<Database> | Transaction<Database>;

export const toBool = (v: number): boolean => v === 1;
export const fromBool = (v: boolean): number => (v ? 1 : 0);
/** A nullable integer column (a time, a counter, a sequence number), read like every integer column: through Number(). */
export const numOrNull = (v: number | null): number | null => (v === null ? null : Number(v));
/** pg returns affected row counts as bigint; SQLite as bigint too through Kysely. */
export const affected = (r: { numUpdatedRows?: bigint; numDeletedRows?: bigint }): number =>
  Number(r.numUpdatedRows ?? r.numDeletedRows ?? 0n);
