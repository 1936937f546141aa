import { type Selectable, sql } from 'kysely';
import type { AgentStatus, ConnectionAgent, ConnectionRecord, ConnectionsRepo, ConnectionStatus, LimitScope, OperatorBrowser, OperatorCodeRecord } from '../ports/index.ts';
import type { OperatorCodesTable, OperatorConnectionsTable } from '../schema.ts';
import { type Db, affected, numOrNull } from './db.ts';

const toConnection = (r: Selectable<OperatorConnectionsTable>): ConnectionRecord => ({
  id: r.id,
  operatorId: r.operator_id,
  userId: r.user_id,
  sub: r.sub,
  maxAgents: Number(r.max_agents),
  status: r.status as ConnectionStatus,
  createdAt: Number(r.created_at),
  endedAt: numOrNull(r.ended_at),
});

const toCode = (r: Selectable<OperatorCodesTable>): OperatorCodeRecord => ({
  codeHash: r.code_hash,
  operatorId: r.operator_id,
  userId: r.user_id,
  redirectUri: r.redirect_uri,
  codeChallenge: r.code_challenge,
  expiresAt: Number(r.expires_at),
  usedAt: numOrNull(r.used_at),
  connectionId: r.connection_id,
});

const AGENT_COLUMNS = ['id', 'name', 'status', 'browser', 'operator_id', 'connection_id', 'created_at'] as const;

const toAgent = (r: { id: string; name: string; status: string; browser: string | null; operator_id: string | null; connection_id: string | null; created_at: number }): ConnectionAgent => ({
  id: r.id,
  name: r.name,
  status: r.status as AgentStatus,
  browser: r.browser as OperatorBrowser | null,
  operatorId: r.operator_id ?? '',
  connectionId: r.connection_id ?? '',
  createdAt: Number(r.created_at),
});

/**
 * How many live agents of the same connection were made before the row being updated (by
 * created_at, then id): its place in the connection, which the limit is compared with. The statuses
 * an UPDATE below changes are all live, so the count is the same before and after it.
 */
const EARLIER_LIVE = sql<number>`(SELECT count(*) FROM agents b WHERE b.connection_id = agents.connection_id AND b.status <> 'removed' AND (b.created_at < agents.created_at OR (b.created_at = agents.created_at AND b.id < agents.id)))`;
const LIMIT_OF_CONNECTION = sql<number>`(SELECT c.max_agents FROM operator_connections c WHERE c.id = agents.connection_id)`;

export function connectionsRepo(db: Db): ConnectionsRepo {
  const live = async (operatorId: string, userId: string) =>
    db.selectFrom('operator_connections').selectAll().where('operator_id', '=', operatorId).where('user_id', '=', userId).where('status', '=', 'active').executeTakeFirst();
  return {
    async createOrLive(c) {
      // The partial unique index (one `active` row per operator and person) makes a racing second
      // insert a no-op; the live row is then read back, whoever inserted it.
      await db
        .insertInto('operator_connections')
        .values({ id: c.id, operator_id: c.operatorId, user_id: c.userId, sub: c.sub, max_agents: c.maxAgents, status: c.status, created_at: c.createdAt, ended_at: c.endedAt })
        .onConflict((oc) => oc.columns(['operator_id', 'user_id']).where(sql.ref('status'), '=', sql.lit('active')).doNothing())
        .execute();
      const row = await live(c.operatorId, c.userId);
      if (!row) throw new Error('operator connection vanished right after it was made');
      return toConnection(row);
    },
    async byId(id) {
      const r = await db.selectFrom('operator_connections').selectAll().where('id', '=', id).executeTakeFirst();
      return r && toConnection(r);
    },
    async end(id, now) {
      const r = await db.updateTable('operator_connections').set({ status: 'removed', ended_at: now }).where('id', '=', id).where('status', '=', 'active').executeTakeFirst();
      return affected(r) === 1;
    },
    async listForUser(userId, limit) {
      const rows = await db.selectFrom('operator_connections').selectAll().where('user_id', '=', userId).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
      return rows.map(toConnection);
    },
    async listForOperator(operatorId, limit) {
      const rows = await db.selectFrom('operator_connections').selectAll().where('operator_id', '=', operatorId).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
      return rows.map(toConnection);
    },
    async setMaxAgents(id, maxAgents) {
      return affected(await db.updateTable('operator_connections').set({ max_agents: maxAgents }).where('id', '=', id).where('status', '=', 'active').executeTakeFirst()) === 1;
    },
    async agentsOf(connectionIds) {
      if (connectionIds.length === 0) return [];
      const rows = await db.selectFrom('agents').select(AGENT_COLUMNS).where('connection_id', 'in', [...connectionIds]).orderBy('created_at').orderBy('id').execute();
      return rows.map(toAgent);
    },
    async operatorAgents(operatorId, connectionId, limit) {
      let q = db.selectFrom('agents').select(AGENT_COLUMNS).where('operator_id', '=', operatorId);
      if (connectionId !== null) q = q.where('connection_id', '=', connectionId);
      return (await q.orderBy('created_at').orderBy('id').limit(limit).execute()).map(toAgent);
    },
    async liveAgents(connectionId) {
      const r = await db.selectFrom('agents').select((eb) => eb.fn.countAll<number>().as('n')).where('connection_id', '=', connectionId).where('status', '<>', 'removed').executeTakeFirst();
      return Number(r?.n ?? 0);
    },
    async suspendBeyond(scope: LimitScope, revSeq, now) {
      let q = db.updateTable('agents').set({ status: 'suspended', suspended_at: now, suspended_rev_seq: revSeq });
      q = 'connectionId' in scope ? q.where('connection_id', '=', scope.connectionId) : q.where('operator_id', '=', scope.operatorId).where('connection_id', 'is not', null);
      const rows = await q.where('status', '=', 'active').where(sql<boolean>`${EARLIER_LIVE} >= ${LIMIT_OF_CONNECTION}`).returning('id').execute();
      return rows.map((r) => r.id).sort();
    },
    async liftWithin(connectionId, now) {
      // Every SET expression reads the row as it was, so unblocked_rev_seq takes the suspension's
      // rev_seq in the statement that clears it (as the operator switch's unblock does).
      const rows = await db
        .updateTable('agents')
        .set({ status: 'active', unblocked_at: now, unblocked_rev_seq: sql<number>`suspended_rev_seq`, suspended_at: null, suspended_rev_seq: null })
        .where('connection_id', '=', connectionId)
        .where('status', '=', 'suspended')
        .where(sql<boolean>`${EARLIER_LIVE} < ${LIMIT_OF_CONNECTION}`)
        .returning('id')
        .execute();
      return rows.map((r) => r.id).sort();
    },
    async saveCode(code) {
      await db
        .insertInto('operator_codes')
        .values({ code_hash: code.codeHash, operator_id: code.operatorId, user_id: code.userId, redirect_uri: code.redirectUri, code_challenge: code.codeChallenge, expires_at: code.expiresAt, used_at: code.usedAt, connection_id: code.connectionId })
        .execute();
    },
    async spendCode(codeHash, now) {
      const r = await db
        .updateTable('operator_codes')
        .set({ used_at: now })
        .where('code_hash', '=', codeHash)
        .where('used_at', 'is', null)
        .where('expires_at', '>', now)
        .returningAll()
        .executeTakeFirst();
      return r && toCode(r);
    },
    async codeByHash(codeHash) {
      const r = await db.selectFrom('operator_codes').selectAll().where('code_hash', '=', codeHash).executeTakeFirst();
      return r && toCode(r);
    },
    async linkCode(codeHash, connectionId) {
      await db.updateTable('operator_codes').set({ connection_id: connectionId }).where('code_hash', '=', codeHash).execute();
    },
    async purgeCodes(before) {
      return affected(await db.deleteFrom('operator_codes').where('expires_at', '<', before).executeTakeFirst());
    },
  };
}
