import type { Selectable } from 'kysely';
import { LIMITS } from '@mandate/protocol';
import type { AgentFlag, AgentRecord, AgentStatus, AgentsRepo } from '../ports.ts';
import type { AgentsTable } from '../schema.ts';
import { type Db, numOrNull } from './db.ts';

const toRecord = (r: Selectable<AgentsTable>): AgentRecord => ({
  id: r.id,
  userId: r.user_id,
  name: r.name,
  publicJwk: JSON.parse(r.public_jwk) as AgentRecord['publicJwk'],
  jkt: r.jkt,
  status: r.status as AgentStatus,
  flag: r.flag as AgentFlag,
  flagRevSeq: numOrNull(r.flag_rev_seq),
  createdAt: Number(r.created_at),
  removedAt: numOrNull(r.removed_at),
  unblockedAt: numOrNull(r.unblocked_at),
  unblockedRevSeq: numOrNull(r.unblocked_rev_seq),
});

export function agentsRepo(db: Db): AgentsRepo {
  return {
    async create(a) {
      await db
        .insertInto('agents')
        .values({
          id: a.id,
          user_id: a.userId,
          name: a.name,
          public_jwk: JSON.stringify(a.publicJwk),
          jkt: a.jkt,
          status: a.status,
          flag: a.flag,
          flag_rev_seq: a.flagRevSeq,
          created_at: a.createdAt,
          removed_at: a.removedAt,
          unblocked_at: a.unblockedAt,
          unblocked_rev_seq: a.unblockedRevSeq,
        })
        .execute();
    },
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
      const values: Partial<AgentsTable> = {};
      if (patch.status !== undefined) values.status = patch.status;
      if (patch.flag !== undefined) values.flag = patch.flag;
      if (patch.flagRevSeq !== undefined) values.flag_rev_seq = patch.flagRevSeq;
      if (patch.removedAt !== undefined) values.removed_at = patch.removedAt;
      if (patch.name !== undefined) values.name = patch.name;
      if (patch.unblockedAt !== undefined) values.unblocked_at = patch.unblockedAt;
      if (patch.unblockedRevSeq !== undefined) values.unblocked_rev_seq = patch.unblockedRevSeq;
      if (Object.keys(values).length === 0) return;
      await db.updateTable('agents').set(values).where('id', '=', id).execute();
    },
    async listRevoked(now) {
      // A lifted block stays listed while passes minted before it could still be unexpired.
      const since = now - LIMITS.passLifetimeSec * 1000;
      const rows = await db
        .selectFrom('agents')
        .selectAll()
        .where((eb) => eb.or([eb('flag', '!=', 'ok'), eb('status', '=', 'removed'), eb('unblocked_at', '>', since)]))
        .orderBy('id')
        .execute();
      return rows.map(toRecord);
    },
  };
}
