import { CompiledQuery, type DatabaseConnection, type Driver, SqliteDialect, type SqliteDialectConfig, SqliteDriver } from 'kysely';

/**
 * The main connection's transactions begin IMMEDIATE: with the write lock, waited for under the
 * busy timeout like any write. Kysely's `begin` is DEFERRED: a transaction that reads first (a
 * count before an insert, say) holds only a snapshot, and when one of the store's other
 * connections (the commit threads of sqlite/verify-worker.ts and sqlite/pass-worker.ts) commits
 * before its first write, SQLite cannot upgrade that snapshot: the write fails at once with
 * SQLITE_BUSY_SNAPSHOT ("database is locked"), no busy timeout applies, and the request answered
 * 500. The main connection runs one transaction at a time anyway (Kysely's SQLite driver has one
 * connection); the cost is that its few read-only transactions hold the write lock too, briefly.
 * So, as before for any transaction that had written: a transaction must never wait for a commit
 * thread's write (Store.singleUse, commitPassIssuance, verifyLookup), which would wait for this lock.
 */
export class ImmediateSqliteDialect extends SqliteDialect {
  private readonly settings: SqliteDialectConfig;

  constructor(config: SqliteDialectConfig) {
    super(config);
    this.settings = config;
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.settings);
  }
}

class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}
