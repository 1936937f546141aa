import type { Database as BetterSqlite, Statement } from 'better-sqlite3';
import type { SqliteDatabase } from 'kysely';

/**
 * Kysely's SQLite driver prepares every query afresh; preparing costs more than running the small
 * primary-key reads and writes of the hot paths (verify, token). This keeps the prepared statements
 * of the last `max` distinct SQL texts, the way a server keeps query plans. A statement that is
 * still busy (a streamed read being iterated) is never handed out twice: a fresh one is prepared.
 */
export function withStatementCache(database: BetterSqlite, max = 500): SqliteDatabase {
  const statements = new Map<string, Statement>();
  return {
    close: () => void database.close(),
    prepare(sql: string) {
      const cached = statements.get(sql);
      if (cached && !cached.busy) {
        statements.delete(sql); // most recently used last
        statements.set(sql, cached);
        return cached;
      }
      const fresh = database.prepare(sql);
      if (cached) return fresh;
      statements.set(sql, fresh);
      if (statements.size > max) {
        const oldest = statements.keys().next();
        if (oldest.done !== true) statements.delete(oldest.value);
      }
      return fresh;
    },
  };
}
