import { sql, type Selectable, type Updateable } from 'kysely';
import { listedSince } from '../../domain/revocation/revocation-window.ts';
import type { AgentFlag, AgentPublicJwk, AgentRecord, AgentStanding, AgentStatus, AgentsRepo, GrantStanding, GrantStatus, OperatorBrowser, RevokedAgentReason, RevokedAgentRow } from '../ports/index.ts';
import type { AgentsTable } from '../schema.ts';
import { type Db, numOrNull } from './db.ts';
import { prepared } from './prepared.ts';

// An app has no key: its key columns hold '' (NOT NULL since migration 001) and are handed out as
// null, so that every key check (agent JWT, DPoP, pairing) fails closed on an app.
const toRecord = (r: Selectable<AgentsTable>): AgentRecord => ({
  id: r.id,
  userId: r.user_id,
  name: r.name,
  kind: r.kind === 'app' ? 'app' : 'agent',
  clientId: r.client_id,
  publicJwk: r.public_jwk === '' ? null : (JSON.parse(r.public_jwk) as AgentPublicJwk),
  jkt: r.jkt === '' ? null : r.jkt,
  status: r.status as AgentStatus,
  flag: r.flag as AgentFlag,
  flagRevSeq: numOrNull(r.flag_rev_seq),
  createdAt: Number(r.created_at),
  removedAt: numOrNull(r.removed_at),
  unblockedAt: numOrNull(r.unblocked_at),
  unblockedRevSeq: numOrNull(r.unblocked_rev_seq),
});

/** The row of a new agent or app (an app's key columns hold ''). */
const agentRow = (a: AgentRecord) => ({
  id: a.id,
  user_id: a.userId,
  name: a.name,
  kind: a.kind,
  client_id: a.clientId,
  public_jwk: a.publicJwk === null ? '' : JSON.stringify(a.publicJwk),
  jkt: a.jkt ?? '',
  status: a.status,
  flag: a.flag,
  flag_rev_seq: a.flagRevSeq,
  created_at: a.createdAt,
  removed_at: a.removedAt,
  unblocked_at: a.unblockedAt,
  unblocked_rev_seq: a.unblockedRevSeq,
});

/** An agents row as the store hands it out (also read by postgres/pass-issuance.ts, which batches the token path's agent reads). */
export const agentFromRow = toRecord;

export function agentsRepo(db: Db): AgentsRepo {
  // Cloud verify's read (once per request, or once per batch of requests: kysely-store.ts). Compiled
  // once per shape, the number of agents x grants asked (prepared.ts), for the first 256 shapes seen.
  const withGrantsQuery = (agents: number, grants: number) =>
    prepared(db, [...range(agents, 'a'), ...range(grants, 'g')], (p) =>
      db
        .selectFrom('agents')
        .leftJoin('grants', (join) => join.onRef('grants.agent_id', '=', 'agents.id').on('grants.id', 'in', range(grants, 'g').map((g) => p(g))))
        .select(['agents.id', 'agents.name', 'agents.status', 'agents.flag', 'agents.unblocked_rev_seq', 'grants.id as grant_id', 'grants.agent_id as grant_agent_id', 'grants.site as grant_site', 'grants.resource as grant_resource', 'grants.status as grant_status'])
        .where('agents.id', 'in', range(agents, 'a').map((a) => p(a))));
  const compiled = new Map<string, ReturnType<typeof withGrantsQuery>>();
  const withGrants: AgentsRepo['withGrants'] = async (pairs) => {
    if (pairs.length === 0) return [];
    const agentIds = [...new Set(pairs.map((x) => x.agentId))];
    const grantIds = [...new Set(pairs.map((x) => x.grantId))];
    const shape = `${agentIds.length}x${grantIds.length}`;
    let run = compiled.get(shape);
    if (run === undefined) {
      run = withGrantsQuery(agentIds.length, grantIds.length);
      if (compiled.size < 256) compiled.set(shape, run);
    }
    const values: Record<string, unknown> = {};
    agentIds.forEach((id, i) => (values[`a${i}`] = id));
    grantIds.forEach((id, i) => (values[`g${i}`] = id));
    return standingsFor(await run(values), pairs);
  };
  const liveAppOf: AgentsRepo['liveAppOf'] = async (userId, clientId) => {
    const r = await db.selectFrom('agents').selectAll().where('user_id', '=', userId).where('client_id', '=', clientId).where('status', '<>', 'removed').executeTakeFirst();
    return r && toRecord(r);
  };
  return {
    async create(a) {
      await db.insertInto('agents').values(agentRow(a)).execute();
    },
    async createApp(app) {
      if (app.kind !== 'app' || app.clientId === null || app.publicJwk !== null || app.jkt !== null) throw new Error('createApp takes an app: kind app, a client_id, no key');
      // No conflict target: the only unique index an app can meet besides the id is agents_live_app
      // (migration 033), and a fresh random id does not collide.
      const r = await db.insertInto('agents').values(agentRow(app)).onConflict((oc) => oc.doNothing()).executeTakeFirst();
      if (Number(r.numInsertedOrUpdatedRows ?? 0n) === 1) return { app, created: true };
      const found = await liveAppOf(app.userId, app.clientId);
      if (found === undefined) throw new Error('createApp: the live app that won the race is gone');
      return { app: found, created: false };
    },
    liveAppOf,
    async byId(id) {
      const r = await db.selectFrom('agents').selectAll().where('id', '=', id).executeTakeFirst();
      return r && toRecord(r);
    },
    async listForUser(userId, includeRemoved = false) {
      let q = db.selectFrom('agents').selectAll().where('user_id', '=', userId);
      if (!includeRemoved) q = q.where('status', '!=', 'removed');
      return (await q.orderBy('created_at').orderBy('id').execute()).map(toRecord);
    },
    async update(id, patch) {
      const values: Updateable<AgentsTable> = {};
      if (patch.status !== undefined) values.status = patch.status;
      if (patch.flag !== undefined) values.flag = patch.flag;
      if (patch.flagRevSeq !== undefined) values.flag_rev_seq = patch.flagRevSeq;
      if (patch.removedAt !== undefined) values.removed_at = patch.removedAt;
      if (patch.name !== undefined) values.name = patch.name;
      if (patch.unblockedAt !== undefined) values.unblocked_at = patch.unblockedAt;
      if (patch.unblockedRevSeq !== undefined) values.unblocked_rev_seq = patch.unblockedRevSeq;
      if (patch.flaggedAt !== undefined) values.flagged_at = patch.flaggedAt;
      if (Object.keys(values).length === 0) return;
      await db.updateTable('agents').set(values).where('id', '=', id).execute();
    },
    async withGrant(agentId, grantId) {
      const [found] = await withGrants([{ agentId, grantId }]);
      return found;
    },
    withGrants,
    async passwordManager(agentId) {
      const r = await db.selectFrom('agents').select(['browser', 'password_manager']).where('id', '=', agentId).executeTakeFirst();
      return r && { browser: r.browser as OperatorBrowser | null, enabled: Number(r.password_manager) === 1 };
    },
    async passwordManagersOfOwner(userId) {
      const rows = await db.selectFrom('agents').select(['id', 'browser', 'password_manager']).where('user_id', '=', userId).execute();
      return new Map(rows.map((r) => [r.id, { browser: r.browser as OperatorBrowser | null, enabled: Number(r.password_manager) === 1 }]));
    },
    async setPasswordManager(agentId, enabled) {
      await db.updateTable('agents').set({ password_manager: enabled ? 1 : 0 }).where('id', '=', agentId).execute();
    },
    async listRevoked(now, page) {
      const since = listedSince(now);
      if (page !== undefined) return revokedPage(db, since, page);
      const byId = new Map<string, RevokedAgentRow>();
      for (const reason of REVOKED_AGENT_REASONS) {
        for (const r of await revokedPage(db, since, { reason })) if (!byId.has(r.id)) byId.set(r.id, r);
      }
      return [...byId.values()];
    },
  };
}

const REVOKED_AGENT_REASONS: readonly RevokedAgentReason[] = ['flagged', 'blocked', 'suspended', 'removed', 'unblocked'];

/**
 * One reason's rows of the revocation list (decisions §25, domain/revocation/revocation-window.ts),
 * in the order of its partial index of migration 014, so that each page is one range of it however
 * many agents were ever flagged, removed or unblocked (the constants are literals, spelled as in the
 * indexes). An agent flagged now stays listed while flagged; a removed one leaves that index, and its
 * tombstone ages out with the window.
 */
async function revokedPage(db: Db, since: number, page: { reason: RevokedAgentReason; after?: RevokedAgentRow; limit?: number }): Promise<RevokedAgentRow[]> {
  let q = db.selectFrom('agents').select(['id', 'user_id', 'status', 'flag', 'flag_rev_seq', 'flagged_at', 'removed_at', 'unblocked_at', 'unblocked_rev_seq', 'operator_blocked_rev_seq', 'suspended_rev_seq']);
  const after = page.after;
  if (page.reason === 'flagged') {
    q = q.where('flag', '<>', sql.lit('ok')).where('status', '=', sql.lit('active'));
    if (after !== undefined) q = q.where('id', '>', after.id);
    q = q.orderBy('id');
  } else if (page.reason === 'blocked') {
    // Index `agents_blocked_live` (migration 024): blocked by the operator switch, listed while blocked.
    q = q.where('status', '=', sql.lit('blocked'));
    if (after !== undefined) q = q.where('id', '>', after.id);
    q = q.orderBy('id');
  } else if (page.reason === 'suspended') {
    // Index `agents_suspended_live` (migration 027): suspended by the owner's connection limit, listed while suspended.
    q = q.where('status', '=', sql.lit('suspended'));
    if (after !== undefined) q = q.where('id', '>', after.id);
    q = q.orderBy('id');
  } else {
    const at = page.reason === 'removed' ? 'removed_at' : 'unblocked_at';
    const key = page.reason === 'removed' ? after?.removedAt : after?.unblockedAt;
    // A later page is a range from the key the one before ended at (as in grants.listRevoked).
    if (after === undefined || key == null) q = q.where(at, '>', since);
    else q = q.where(at, '>=', Math.max(key, since + 1)).where((eb) => eb(eb.refTuple(at, 'id'), '>', eb.tuple(key, after.id)));
    q = q.orderBy(at).orderBy('id');
  }
  if (page.limit !== undefined) q = q.limit(page.limit);
  const rows = await q.execute();
  return rows.map((r) => ({
    id: r.id,
    userId: r.user_id,
    status: r.status as AgentStatus,
    flag: r.flag as AgentFlag,
    flagRevSeq: numOrNull(r.flag_rev_seq),
    flaggedAt: numOrNull(r.flagged_at),
    removedAt: numOrNull(r.removed_at),
    unblockedAt: numOrNull(r.unblocked_at),
    unblockedRevSeq: numOrNull(r.unblocked_rev_seq),
    blockedRevSeq: numOrNull(r.operator_blocked_rev_seq),
    suspendedRevSeq: numOrNull(r.suspended_rev_seq),
  }));
}

/** A row of cloud verify's read: an agent, joined with one of the grants asked for (or nulls). */
export interface StandingRow {
  id: string;
  name: string;
  status: string;
  flag: string;
  /** bigint: PostgreSQL's driver answers it as a string (a number inside JSON). */
  unblocked_rev_seq: number | string | null;
  grant_id: string | null;
  grant_agent_id: string | null;
  grant_site: string | null;
  grant_resource: string | null;
  grant_status: string | null;
}

/** The answers of AgentsRepo.withGrants, in the order of `pairs`, from the rows of its read. */
export function standingsFor(rows: readonly StandingRow[], pairs: readonly { agentId: string; grantId: string }[]): Awaited<ReturnType<AgentsRepo['withGrants']>> {
  const agents = new Map<string, AgentStanding>();
  const grants = new Map<string, GrantStanding>();
  for (const r of rows) {
    const { grant_id, grant_agent_id, grant_site, grant_resource, grant_status } = r;
    if (!agents.has(r.id)) agents.set(r.id, { id: r.id, name: r.name, status: r.status as AgentStatus, flag: r.flag as AgentFlag, unblockedRevSeq: r.unblocked_rev_seq === null ? null : Number(r.unblocked_rev_seq) });
    if (grant_id !== null && grant_agent_id !== null && grant_site !== null && grant_status !== null) {
      grants.set(grant_id, { id: grant_id, agentId: grant_agent_id, site: grant_site, resource: grant_resource ?? null, status: grant_status as GrantStatus });
    }
  }
  return pairs.map(({ agentId, grantId }) => {
    const agent = agents.get(agentId);
    if (agent === undefined) return undefined;
    const grant = grants.get(grantId);
    return { agent, grant: grant?.agentId === agentId ? grant : undefined };
  });
}

/** `prefix0`, `prefix1`, ... : parameter names of a prepared query. */
const range = (n: number, prefix: string): string[] => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
