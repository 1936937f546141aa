import SQLite from 'better-sqlite3';
import type { Selectable } from 'kysely';
import type { AgentsRepo, GrantsRepo, OidcClientsRepo, OidcSignInsRepo, UsersRepo } from '../ports/index.ts';
import type { AgentsTable, GrantsTable, OidcClientsTable, OidcSignInsTable, UsersTable } from '../schema.ts';
import { agentFromRow } from '../repos/agents.ts';
import { grantFromRow } from '../repos/grants.ts';
import { signInFromRow } from '../repos/oidc-sign-ins.ts';
import { userFromRow } from '../repos/users.ts';
import { clientFromRow } from '../repos/oidc-clients.ts';
import { whenNotBusy } from './hot-path.ts';

/** The reads of the token endpoints (pass issuance; the OIDC refresh), straight on the driver. */
export interface TokenReads {
  agentById: AgentsRepo['byId'];
  activeFor: GrantsRepo['activeFor'];
  signInBySid: OidcSignInsRepo['bySid'];
  userById: UsersRepo['byId'];
  clientById: OidcClientsRepo['byId'];
  close(): void;
}

/**
 * The reads every token call makes (the agent, its grant at the site; for an OIDC refresh the client,
 * the sign-in and the owner), on a connection of their own that only reads (as sqlite/hot-path.ts's:
 * in WAL mode a read never waits for a writer, and one told "busy" is tried again on a timer).
 * Through Kysely each one was built, compiled and handed through its connection queue on the event
 * loop. Each statement is the repository's (repos/agents.ts byId, repos/grants.ts activeFor,
 * repos/oidc-sign-ins.ts bySid, repos/users.ts byId, repos/oidc-clients.ts byId), rows read the
 * same way: the store contract suites run against both.
 */
export function sqliteTokenReads(path: string): TokenReads {
  const reader = new SQLite(path, { timeout: 0 });
  const one = <Row, Rec>(text: string, fromRow: (row: Row) => Rec) => {
    const statement = reader.prepare<unknown[], Row>(text);
    return (...args: unknown[]): Promise<Rec | undefined> =>
      whenNotBusy(() => {
        const row = statement.get(...args);
        return row && fromRow(row);
      });
  };
  const agent = one<Selectable<AgentsTable>, ReturnType<typeof agentFromRow>>('SELECT * FROM agents WHERE id = ?', agentFromRow);
  const grant = one<Selectable<GrantsTable>, ReturnType<typeof grantFromRow>>(
    `SELECT * FROM grants WHERE agent_id = ? AND site = ? AND resource IS NULL AND status = 'active' ORDER BY created_at DESC LIMIT 1`,
    grantFromRow,
  );
  const signIn = one<Selectable<OidcSignInsTable>, ReturnType<typeof signInFromRow>>('SELECT * FROM oidc_sign_ins WHERE sid = ?', signInFromRow);
  const user = one<Selectable<UsersTable>, ReturnType<typeof userFromRow>>('SELECT * FROM users WHERE id = ?', userFromRow);
  const client = one<Selectable<OidcClientsTable>, ReturnType<typeof clientFromRow>>('SELECT * FROM oidc_clients WHERE id = ?', clientFromRow);
  return {
    agentById: (id) => agent(id),
    activeFor: (agentId, site) => grant(agentId, site),
    signInBySid: (sid) => signIn(sid),
    userById: (id) => user(id),
    clientById: (id) => client(id),
    close: () => reader.close(),
  };
}
