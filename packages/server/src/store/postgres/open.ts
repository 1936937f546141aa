import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import type { Store } from '../ports/index.ts';
import type { Database } from '../schema.ts';
import { kyselyStore } from '../kysely-store.ts';
import { migrate } from '../migrations/index.ts';
import { postgresHotPath } from './hot-path.ts';
import { RevocationSignalHub } from '../revocation-signal.ts';
import { listenForRevocations } from './revocation-listen.ts';
import { postgresPassIssuance } from './pass-issuance.ts';
import { postgresSignInRotations } from './sign-in-rotations.ts';
import { postgresActiveGrants, postgresAgentsById, postgresClientsById, postgresSignInsBySid, postgresUsersById } from './token-reads.ts';

const INT8_OID = 20;

/** Connects a pool to `url` and applies migrations. The pool reconnects by itself after an outage. */
export async function openPostgresStore(url: string, poolSize = 10): Promise<Store> {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: 5000,
    // Times are epoch milliseconds in bigint columns: well inside Number's exact range.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
    },
  });
  // A connection lost while idle is reported on the pool, one lost while checked out on the client
  // itself (its running query is rejected as well). Without these listeners either would be an
  // uncaught exception and stop the process; with them the pool simply replaces the connection.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  await migrate(db as Kysely<unknown>, 'postgres');
  const signal = new RevocationSignalHub();
  const store: Store = kyselyStore(db, 'postgres', postgresHotPath(pool), {
    batch: postgresPassIssuance(pool),
    rotations: postgresSignInRotations(pool),
    activeFor: postgresActiveGrants(pool),
    agentById: postgresAgentsById(pool),
    signInBySid: postgresSignInsBySid(pool),
    userById: postgresUsersById(pool),
    clientById: postgresClientsById(pool),
  }, signal);
  const listener = listenForRevocations(url, signal);
  const close = store.close;
  store.close = async () => {
    await listener.close();
    await close();
  };
  store.poolStats = () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount });
  return store;
}
