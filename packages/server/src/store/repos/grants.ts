import { sql, type Selectable } from 'kysely';
import { listedSince } from '../../domain/revocation/revocation-window.ts';
import type { GrantRecord, GrantStatus, GrantsRepo } from '../ports/index.ts';
import type { GrantsTable } from '../schema.ts';
import { type Db, affected, numOrNull } from './db.ts';
import { prepared } from './prepared.ts';

/** A grants row as the store hands it out (also read by the dialects' pass issuance commits). */
export const grantFromRow = (r: Selectable<GrantsTable>): GrantRecord => ({
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
  resource: r.resource ?? null,
});

/** What revoking writes, for one grant or all of an agent's: the refresh token dies with the grant. */
const revokedValues = (now: number, revSeq: number) => ({ status: 'revoked' as const, revoked_at: now, rev_seq: revSeq, refresh_hash: null });

export function grantsRepo(db: Db): GrantsRepo {
  // Read on every pass issuance: built and compiled once (prepared.ts).
  const activeFor = prepared(db, ['agentId', 'site'], (p) =>
    db
      .selectFrom('grants')
      .selectAll()
      .where('agent_id', '=', p('agentId'))
      .where('site', '=', p('site'))
      .where('resource', 'is', null)
      .where('status', '=', 'active')
      .orderBy('created_at', 'desc')
      .limit(1));
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
          resource: g.resource,
        })
        .execute();
    },
    async byId(id) {
      const r = await db.selectFrom('grants').selectAll().where('id', '=', id).executeTakeFirst();
      return r && grantFromRow(r);
    },
    async activeFor(agentId, site) {
      const [r] = await activeFor({ agentId, site });
      return r && grantFromRow(r);
    },
    async activeForResource(agentId, resource) {
      const r = await db.selectFrom('grants').selectAll().where('agent_id', '=', agentId).where('resource', '=', resource).where('status', '=', 'active')
        .orderBy('created_at', 'desc').limit(1).executeTakeFirst();
      return r && grantFromRow(r);
    },
    async supersedeResource(agentId, resource, now) {
      const r = await db
        .updateTable('grants')
        .set({ status: 'superseded', refresh_hash: null, superseded_at: now })
        .where('agent_id', '=', agentId)
        .where('resource', '=', resource)
        .where('status', 'in', ['active', 'revoked'])
        .executeTakeFirst();
      return affected(r);
    },
    async listActiveForUser(userId) {
      const rows = await db.selectFrom('grants').selectAll().where('user_id', '=', userId).where('status', '=', 'active').orderBy('created_at', 'desc').execute();
      return rows.map(grantFromRow);
    },
    async listForAgent(agentId) {
      const rows = await db.selectFrom('grants').selectAll().where('agent_id', '=', agentId).orderBy('created_at', 'desc').execute();
      return rows.map(grantFromRow);
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
        .where('resource', 'is', null)
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
      return r && grantFromRow(r);
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
    async listRevoked(now, page) {
      // The window of decisions §25 (domain/revocation/revocation-window.ts): one range of the
      // partial index grants_revoked_at (migration 014), however many grants were ever revoked.
      // Revoking writes revoked_at and nothing clears it, so a grant superseded after its revocation
      // is read too (its old passes stay refused), and an active grant or one superseded without a
      // revocation never is. A later page starts at the key where the one before ended: its lower
      // bound on revoked_at is that key's time (later than the window's start), so each page is a
      // range from the key on, not from the window's start (a plain comparison beside the row value,
      // which is what lets SQLite use the partial index and start the range there).
      let q = db.selectFrom('grants').select(['id', 'agent_id', 'site', 'resource', 'rev_seq', 'revoked_at']);
      const after = page?.after;
      if (after === undefined) q = q.where('revoked_at', '>', listedSince(now));
      else q = q.where('revoked_at', '>=', Math.max(after.revokedAt, listedSince(now) + 1)).where((eb) => eb(eb.refTuple('revoked_at', 'id'), '>', eb.tuple(after.revokedAt, after.id)));
      q = q.orderBy('revoked_at').orderBy('id');
      if (page !== undefined) q = q.limit(page.limit);
      const rows = await q.execute();
      return rows.map((r) => ({ id: r.id, agentId: r.agent_id, site: r.site, resource: r.resource ?? null, revSeq: numOrNull(r.rev_seq), revokedAt: Number(r.revoked_at) }));
    },
  };
}
