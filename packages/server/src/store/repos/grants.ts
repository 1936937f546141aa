import { sql, type Selectable } from 'kysely';
import { LIMITS } from '@mandate/protocol';
import type { GrantRecord, GrantStatus, GrantsRepo } from '../ports.ts';
import type { GrantsTable } from '../schema.ts';
import { type Db, affected, numOrNull } from './db.ts';

const toRecord = (r: Selectable<GrantsTable>): GrantRecord => ({
  id: r.id,
  userId: r.user_id,
  agentId: r.agent_id,
  site: r.site,
  scopes: JSON.parse(r.scopes) as string[],
  userInfo: JSON.parse(r.user_info) as string[],
  status: r.status as GrantStatus,
  createdAt: Number(r.created_at),
  expiresAt: numOrNull(r.expires_at),
  usesLeft: numOrNull(r.uses_left),
  refreshHash: r.refresh_hash,
  passesIssued: Number(r.passes_issued),
  revokedAt: numOrNull(r.revoked_at),
  revSeq: numOrNull(r.rev_seq),
  supersededAt: numOrNull(r.superseded_at),
});

/** What revoking writes, for one grant or all of an agent's: the refresh token dies with the grant. */
const revokedValues = (now: number, revSeq: number) => ({ status: 'revoked' as const, revoked_at: now, rev_seq: revSeq, refresh_hash: null });

export function grantsRepo(db: Db): GrantsRepo {
  return {
    async create(g) {
      await db
        .insertInto('grants')
        .values({
          id: g.id,
          user_id: g.userId,
          agent_id: g.agentId,
          site: g.site,
          scopes: JSON.stringify(g.scopes),
          user_info: JSON.stringify(g.userInfo),
          status: g.status,
          created_at: g.createdAt,
          expires_at: g.expiresAt,
          uses_left: g.usesLeft,
          refresh_hash: g.refreshHash,
          passes_issued: g.passesIssued,
          revoked_at: g.revokedAt,
          rev_seq: g.revSeq,
          superseded_at: g.supersededAt,
        })
        .execute();
    },
    async byId(id) {
      const r = await db.selectFrom('grants').selectAll().where('id', '=', id).executeTakeFirst();
      return r && toRecord(r);
    },
    async activeFor(agentId, site) {
      const r = await db
        .selectFrom('grants')
        .selectAll()
        .where('agent_id', '=', agentId)
        .where('site', '=', site)
        .where('status', '=', 'active')
        .orderBy('created_at', 'desc')
        .executeTakeFirst();
      return r && toRecord(r);
    },
    async listActiveForUser(userId) {
      const rows = await db.selectFrom('grants').selectAll().where('user_id', '=', userId).where('status', '=', 'active').orderBy('created_at', 'desc').execute();
      return rows.map(toRecord);
    },
    async listForAgent(agentId) {
      const rows = await db.selectFrom('grants').selectAll().where('agent_id', '=', agentId).orderBy('created_at', 'desc').execute();
      return rows.map(toRecord);
    },
    async revoke(id, now, revSeq) {
      const r = await db
        .updateTable('grants')
        .set(revokedValues(now, revSeq))
        .where('id', '=', id)
        .where('status', '=', 'active')
        .executeTakeFirst();
      return affected(r) === 1;
    },
    async revokeAllForAgent(agentId, now, revSeq) {
      const r = await db
        .updateTable('grants')
        .set(revokedValues(now, revSeq))
        .where('agent_id', '=', agentId)
        .where('status', '=', 'active')
        .executeTakeFirst();
      return affected(r);
    },
    async supersede(agentId, site, now) {
      const r = await db
        .updateTable('grants')
        .set({ status: 'superseded', refresh_hash: null, superseded_at: now })
        .where('agent_id', '=', agentId)
        .where('site', '=', site)
        .where('status', 'in', ['active', 'revoked'])
        .executeTakeFirst();
      return affected(r);
    },
    async issuePass(id, { now, newRefreshHash, expectedRefreshHash }) {
      let q = db
        .updateTable('grants')
        .set({
          refresh_hash: newRefreshHash,
          passes_issued: sql`passes_issued + 1`,
          uses_left: sql`case when uses_left is null then null else uses_left - 1 end`,
        })
        .where('id', '=', id)
        .where('status', '=', 'active')
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
        .where((eb) => eb.or([eb('uses_left', 'is', null), eb('uses_left', '>', 0)]));
      if (expectedRefreshHash !== undefined) q = q.where('refresh_hash', '=', expectedRefreshHash);
      const r = await q.returningAll().executeTakeFirst();
      return r && toRecord(r);
    },
    async setUserInfo(id, userInfo, expected) {
      const r = await db
        .updateTable('grants')
        .set({ user_info: JSON.stringify(userInfo) })
        .where('id', '=', id)
        .where('user_info', '=', JSON.stringify(expected))
        .executeTakeFirst();
      return affected(r) === 1;
    },
    async listRevoked(now) {
      // A revoked grant that a re-approval superseded stays listed while passes minted before the
      // revocation could still be unexpired; see 004-revocation-window.ts. One SELECT per reason,
      // joined by UNION, each reading only its partial index of migration 006; the constants are
      // literals, spelled as in those indexes.
      const since = now - LIMITS.passLifetimeSec * 1000;
      const listed = db.selectFrom('grants').selectAll();
      const rows = await listed
        .where('status', '=', sql.lit('revoked'))
        .union(listed.where('status', '=', sql.lit('superseded')).where('revoked_at', 'is not', null).where('superseded_at', '>', since))
        .orderBy('rev_seq')
        .orderBy('id')
        .execute();
      return rows.map(toRecord);
    },
  };
}
