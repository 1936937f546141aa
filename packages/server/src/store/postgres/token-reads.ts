import type pg from 'pg';
import type { Selectable } from 'kysely';
import type { AgentRecord, AgentsRepo, GrantRecord, GrantsRepo, OidcClientsRepo, OidcSignInsRepo, UsersRepo } from '../ports/index.ts';
import { batched } from '../../batching.ts';
import type { AgentsTable, GrantsTable, OidcClientsTable, OidcSignInsTable, UsersTable } from '../schema.ts';
import { grantFromRow } from '../repos/grants.ts';
import { agentFromRow } from '../repos/agents.ts';
import { signInFromRow } from '../repos/oidc-sign-ins.ts';
import { userFromRow } from '../repos/users.ts';
import { clientFromRow } from '../repos/oidc-clients.ts';

/**
 * The reads of the token endpoints (pass issuance; the OIDC refresh) as batched statements: the
 * calls made while the event loop is busy, or while 4 reads are out, share one round trip
 * (batching.ts). Each means what its repository's read means (the store contract suites run
 * against both).
 */

/**
 * GrantsRepo.activeFor for many (agent, site) pairs in one statement: the newest active grant of
 * each, read through the index grants_agent_site. Pass issuance reads one per call; concurrent calls
 * share one round trip (batching.ts: the calls made while the event loop is busy or while 4 reads are out).
 */
const ACTIVE_GRANTS: pg.QueryConfig = {
  name: 'mandate_active_grants',
  text: `SELECT q.n, g.* FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS q(agent_id, site, n)
CROSS JOIN LATERAL (SELECT * FROM grants WHERE agent_id = q.agent_id AND site = q.site AND resource IS NULL AND status = 'active' ORDER BY created_at DESC LIMIT 1) g`,
};

export function postgresActiveGrants(pool: pg.Pool): GrantsRepo['activeFor'] {
  const read = batched<{ agentId: string; site: string }, GrantRecord | undefined>(async (pairs) => {
    const { rows } = await pool.query<Selectable<GrantsTable> & { n: string | number }>({ ...ACTIVE_GRANTS, values: [pairs.map((p) => p.agentId), pairs.map((p) => p.site)] });
    const out = new Array<GrantRecord | undefined>(pairs.length).fill(undefined);
    for (const { n, ...row } of rows) out[Number(n) - 1] = grantFromRow(row);
    return out;
  }, { maxInFlight: 4 });
  return (agentId, site) => read({ agentId, site });
}

/**
 * AgentsRepo.byId: the agent JWT check of every token call (and of the other agent endpoints) reads
 * one. Measured on pass issuance: 590 against 827 µs of the service's CPU per pass, and 260 against
 * 472 µs of PostgreSQL's (bench/README.md).
 */
export const postgresAgentsById = (pool: pg.Pool): AgentsRepo['byId'] =>
  byKeys<Selectable<AgentsTable>, AgentRecord>(pool, 'mandate_agents_by_id', 'agents', 'id', agentFromRow);

/**
 * A read by primary key for many keys in one statement (`key = ANY($1)`), each answer the row of its
 * key as `fromRow` reads it.
 */
function byKeys<Row extends Record<string, unknown>, Rec>(pool: pg.Pool, name: string, table: string, key: string, fromRow: (row: Row) => Rec): (k: string) => Promise<Rec | undefined> {
  const statement = { name, text: `SELECT * FROM ${table} WHERE ${key} = ANY($1::text[])` };
  return batched<string, Rec | undefined>(async (keys) => {
    const { rows } = await pool.query<Row>({ ...statement, values: [[...new Set(keys)]] });
    const byKey = new Map(rows.map((r) => [r[key] as string, fromRow(r)]));
    return keys.map((k) => byKey.get(k));
  }, { maxInFlight: 4 });
}

export const postgresSignInsBySid = (pool: pg.Pool): OidcSignInsRepo['bySid'] =>
  byKeys<Selectable<OidcSignInsTable>, ReturnType<typeof signInFromRow>>(pool, 'mandate_sign_ins_by_sid', 'oidc_sign_ins', 'sid', signInFromRow);

export const postgresUsersById = (pool: pg.Pool): UsersRepo['byId'] =>
  byKeys<Selectable<UsersTable>, ReturnType<typeof userFromRow>>(pool, 'mandate_users_by_id', 'users', 'id', userFromRow);

export const postgresClientsById = (pool: pg.Pool): OidcClientsRepo['byId'] =>
  byKeys<Selectable<OidcClientsTable>, ReturnType<typeof clientFromRow>>(pool, 'mandate_clients_by_id', 'oidc_clients', 'id', clientFromRow);
