import { type Selectable, sql } from 'kysely';
import type { OperatorBrowser, OperatorRecord, OperatorsRepo, OperatorStatus } from '../ports/index.ts';
import type { OperatorsTable } from '../schema.ts';
import { type Db, affected, numOrNull } from './db.ts';

const toRecord = (r: Selectable<OperatorsTable>): OperatorRecord => ({
  id: r.id,
  userId: r.user_id,
  name: r.name,
  domain: r.domain,
  redirectUris: JSON.parse(r.redirect_uris) as string[],
  browser: r.browser as OperatorBrowser,
  secretHash: r.secret_hash,
  secretSetAt: Number(r.secret_set_at),
  status: r.status as OperatorStatus,
  verificationToken: r.verification_token,
  verifiedAt: numOrNull(r.verified_at),
  statusChangedAt: numOrNull(r.status_changed_at),
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
});

export function operatorsRepo(db: Db): OperatorsRepo {
  return {
    async create(o) {
      await db
        .insertInto('operators')
        .values({
          id: o.id,
          user_id: o.userId,
          name: o.name,
          domain: o.domain,
          redirect_uris: JSON.stringify(o.redirectUris),
          browser: o.browser,
          secret_hash: o.secretHash,
          secret_set_at: o.secretSetAt,
          status: o.status,
          verification_token: o.verificationToken,
          verified_at: o.verifiedAt,
          status_changed_at: o.statusChangedAt,
          created_at: o.createdAt,
          updated_at: o.updatedAt,
        })
        .execute();
    },
    async byId(id) {
      const r = await db.selectFrom('operators').selectAll().where('id', '=', id).executeTakeFirst();
      return r && toRecord(r);
    },
    async listForUser(userId) {
      const rows = await db.selectFrom('operators').selectAll().where('user_id', '=', userId).orderBy('created_at').orderBy('id').execute();
      return rows.map(toRecord);
    },
    async listAll(limit) {
      const rows = await db.selectFrom('operators').selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
      return rows.map(toRecord);
    },
    async listForDomain(domain) {
      const rows = await db.selectFrom('operators').selectAll().where('domain', '=', domain).orderBy('created_at').orderBy('id').limit(50).execute();
      return rows.map(toRecord);
    },
    async countForUser(userId) {
      const r = await db.selectFrom('operators').select((eb) => eb.fn.countAll<number>().as('n')).where('user_id', '=', userId).executeTakeFirst();
      return Number(r?.n ?? 0);
    },
    async replaceSecret(userId, id, secretHash, now) {
      const r = await db.updateTable('operators').set({ secret_hash: secretHash, secret_set_at: now, updated_at: now }).where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
      return affected(r) === 1;
    },
    async markVerified(id, now) {
      const r = await db.updateTable('operators').set({ verified_at: now, updated_at: now }).where('id', '=', id).returningAll().executeTakeFirst();
      return r && toRecord(r);
    },
    async switchStatus(id, from, to, now) {
      if (from.length === 0) return false;
      const r = await db.updateTable('operators').set({ status: to, status_changed_at: now, updated_at: now }).where('id', '=', id).where('status', 'in', [...from]).executeTakeFirst();
      return affected(r) === 1;
    },
    async attachAgent(agentId, link) {
      await db.updateTable('agents').set({ operator_id: link.operatorId, connection_id: link.connectionId, browser: link.browser }).where('id', '=', agentId).execute();
    },
    async agentOperatorsOfOwner(userId) {
      const rows = await db
        .selectFrom('agents')
        .innerJoin('operators', 'operators.id', 'agents.operator_id')
        .select(['agents.id', 'agents.operator_id', 'agents.connection_id', 'operators.name'])
        .where('agents.user_id', '=', userId)
        .where('agents.connection_id', 'is not', null)
        .execute();
      return new Map(rows.map((r) => [r.id, { operatorId: r.operator_id as string, name: r.name, connectionId: r.connection_id as string }]));
    },
    async blockAgents(operatorId, revSeq, now) {
      const rows = await db
        .updateTable('agents')
        .set({ status: 'blocked', operator_blocked_at: now, operator_blocked_rev_seq: revSeq, suspended_at: null, suspended_rev_seq: null })
        .where('operator_id', '=', operatorId)
        .where('status', 'in', ['active', 'suspended'])
        .returning('id')
        .execute();
      return rows.map((r) => r.id).sort();
    },
    async unblockAgents(operatorId, now) {
      // Every SET expression reads the row as it was, so unblocked_rev_seq takes the block's rev_seq
      // in the same statement that clears it.
      const rows = await db
        .updateTable('agents')
        .set({ status: 'active', unblocked_at: now, unblocked_rev_seq: sql<number>`operator_blocked_rev_seq`, operator_blocked_at: null, operator_blocked_rev_seq: null })
        .where('operator_id', '=', operatorId)
        .where('status', '=', 'blocked')
        .where('operator_blocked_rev_seq', 'is not', null)
        .returning('id')
        .execute();
      return rows.map((r) => r.id).sort();
    },
    async deleteForUser(userId) {
      const ids = (await db.selectFrom('operators').select('id').where('user_id', '=', userId).execute()).map((r) => r.id);
      if (ids.length > 0) await db.deleteFrom('operator_connections').where('operator_id', 'in', ids).execute();
      await db.deleteFrom('operator_connections').where('user_id', '=', userId).execute();
      await db.deleteFrom('operator_codes').where('user_id', '=', userId).execute();
      await db.deleteFrom('operators').where('user_id', '=', userId).execute();
      return ids;
    },
  };
}
