import { type Selectable, sql } from 'kysely';
import type { ConnectionRecord, ConnectionsRepo, ConnectionStatus, OperatorCodeRecord } from '../ports/index.ts';
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
