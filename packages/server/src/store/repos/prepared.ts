import type { Compilable, CompiledQuery, QueryResult } from 'kysely';

/** Where a compiled query runs: a Kysely instance or transaction, of any schema. */
export interface Executor {
  executeQuery<R>(query: CompiledQuery<R>): Promise<QueryResult<R>>;
}

type Slot = { name: string } | { value: unknown };

/**
 * Placeholder for the parameter `name`, typed as the value it stands for so that it fits where the
 * value goes in the query builder; at run time it is a marker string that `prepared` replaces.
 */
export type Placeholder<K extends string> = <T = string>(name: K) => T;

/**
 * A query that Kysely builds and compiles once and then runs with new values, for the few queries
 * on the hot paths (cloud verify runs them on every request): building and compiling a query with
 * joins costs several times what SQLite takes to run it. `build` must use each placeholder as a
 * plain value (not inside SQL text); the compiled SQL is then reused as is, with the placeholders'
 * positions filled from `values` on every call.
 */
export function prepared<K extends string, O>(db: Executor, names: readonly K[], build: (p: Placeholder<K>) => Compilable<O>): (values: Record<K, unknown>) => Promise<O[]> {
  let compiled: { query: CompiledQuery<O>; slots: Slot[] } | undefined;
  return async (values) => {
    if (compiled === undefined) {
      const markers = new Map<string, K>(names.map((n) => [`\u0001param:${n}\u0001`, n]));
      // The one place where a marker poses as a value of another type; it never reaches the database.
      const p: Placeholder<K> = <T,>(name: K) => `\u0001param:${name}\u0001` as unknown as T;
      const query = build(p).compile();
      const slots = query.parameters.map((v): Slot => {
        const name = typeof v === 'string' ? markers.get(v) : undefined;
        return name === undefined ? { value: v } : { name };
      });
      const used = new Set(slots.flatMap((s) => ('name' in s ? [s.name] : [])));
      for (const n of names) if (!used.has(n)) throw new Error(`prepared query: parameter ${n} is not used as a value`);
      compiled = { query, slots };
    }
    const { query, slots } = compiled;
    const parameters = slots.map((s) => ('name' in s ? values[s.name as K] : s.value));
    return (await db.executeQuery<O>({ ...query, parameters })).rows;
  };
}
