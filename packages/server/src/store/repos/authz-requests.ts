import { sql, type Selectable } from 'kysely';
import type { AgentApprovalDetails, AuthzRequestRecord, AuthzRequestsRepo, OidcRequestContext, RequestKind, RequestStatus } from '../ports/index.ts';
import type { AuthzRequestsTable } from '../schema.ts';
import { type Db, affected, numOrNull, purgeInChunks } from './db.ts';

const toRecord = (r: Selectable<AuthzRequestsTable>): AuthzRequestRecord => ({
  id: r.id,
  kind: r.kind as RequestKind,
  agentId: r.agent_id,
  userId: r.user_id,
  site: r.site,
  scopes: JSON.parse(r.scopes) as string[],
  userInfo: JSON.parse(r.user_info) as string[],
  action: r.action,
  status: r.status as RequestStatus,
  createdAt: Number(r.created_at),
  expiresAt: Number(r.expires_at),
  decidedAt: numOrNull(r.decided_at),
  grantId: r.grant_id,
  oidc: r.oidc === null ? null : (JSON.parse(r.oidc) as OidcRequestContext),
  // Only agent approvals carry details; other kinds read as before migration 021 (no field).
  ...(r.details === null ? {} : { details: JSON.parse(r.details) as AgentApprovalDetails }),
  // Step-ups and agent approvals bound to details (migration 030); both columns or neither.
  ...(r.details_summary === null || r.details_digest === null ? {} : { boundDetails: { summary: r.details_summary, digest: r.details_digest } }),
  // Step-ups the site filed (migration 032); agents' requests carry no field.
  ...(r.filed_by === 'site' ? { filedBy: 'site' as const } : {}),
});

/** `purgeChunk`: rows deleted per statement at most (SQLITE_PURGE_CHUNK); all at once when absent. */
export function authzRequestsRepo(db: Db, purgeChunk?: number): AuthzRequestsRepo {
  return {
    async create(r) {
      // The partial unique index (agent_id, site) WHERE pending AND initial decides a race of two
      // access requests; step-up requests are not limited by it.
      const inserted = await db
        .insertInto('authz_requests')
        .values({
          id: r.id,
          kind: r.kind,
          agent_id: r.agentId,
          user_id: r.userId,
          site: r.site,
          scopes: JSON.stringify(r.scopes),
          user_info: JSON.stringify(r.userInfo),
          action: r.action,
          status: r.status,
          created_at: r.createdAt,
          expires_at: r.expiresAt,
          decided_at: r.decidedAt,
          grant_id: r.grantId,
          oidc: r.oidc === null ? null : JSON.stringify(r.oidc),
          details: r.details === undefined || r.details === null ? null : JSON.stringify(r.details),
          details_summary: r.boundDetails?.summary ?? null,
          details_digest: r.boundDetails?.digest ?? null,
          filed_by: r.filedBy === 'site' ? 'site' : null,
        })
        .onConflict((oc) => oc.columns(['agent_id', 'site']).where('status', '=', sql.lit('pending')).where('kind', '=', sql.lit('initial')).doNothing())
        .returning('id')
        .executeTakeFirst();
      return inserted !== undefined;
    },
    async byId(id) {
      const r = await db.selectFrom('authz_requests').selectAll().where('id', '=', id).executeTakeFirst();
      return r && toRecord(r);
    },
    async pageForUser(userId, afterId, limit) {
      const rows = await db.selectFrom('authz_requests').selectAll().where('user_id', '=', userId).where('id', '>', afterId).orderBy('id').limit(limit).execute();
      return rows.map(toRecord);
    },
    async expireStale(now, scope) {
      let q = db.updateTable('authz_requests').set({ status: 'expired' }).where('status', '=', 'pending').where('expires_at', '<=', now);
      if (scope) q = q.where('agent_id', '=', scope.agentId).where('site', '=', scope.site);
      return (await q.returningAll().execute()).map(toRecord);
    },
    async listPendingForUser(userId, now, limit) {
      let q = db
        .selectFrom('authz_requests')
        .selectAll()
        .where('user_id', '=', userId)
        .where('status', '=', 'pending')
        .where('expires_at', '>', now)
        .orderBy('created_at', 'desc')
        .orderBy('id');
      if (limit !== undefined) q = q.limit(limit);
      return (await q.execute()).map(toRecord);
    },
    async transition(id, from, to, now, patch = {}) {
      let q = db
        .updateTable('authz_requests')
        .set({ status: to, decided_at: now, ...(patch.grantId !== undefined ? { grant_id: patch.grantId } : {}) })
        .where('id', '=', id)
        .where('status', 'in', from);
      if (from.includes('pending')) q = q.where((eb) => eb.or([eb('status', '!=', 'pending'), eb('expires_at', '>', now)]));
      const r = await q.returningAll().executeTakeFirst();
      return r && toRecord(r);
    },
    async decidedSince(agentId, kind, status, since) {
      const rows = await db.selectFrom('authz_requests').selectAll().where('agent_id', '=', agentId).where('kind', '=', kind).where('status', '=', status).where('decided_at', '>=', since).orderBy('decided_at', 'desc').limit(500).execute();
      return rows.map(toRecord);
    },
    async cancelPendingForAgent(agentId, now) {
      const r = await db
        .updateTable('authz_requests')
        .set({ status: 'denied', decided_at: now })
        .where('agent_id', '=', agentId)
        .where('status', 'in', ['pending', 'approved'])
        .executeTakeFirst();
      return affected(r);
    },
    purgeEnded: (before) =>
      // An index range on authz_requests_expires (migration 012); pending rows stay whatever their age.
      purgeInChunks(purgeChunk, async (limit) => {
        const ended = db.selectFrom('authz_requests').select('id').where('expires_at', '<', before).where('status', '!=', 'pending');
        const q = limit === undefined
          ? db.deleteFrom('authz_requests').where('expires_at', '<', before).where('status', '!=', 'pending')
          : db.deleteFrom('authz_requests').where('id', 'in', ended.limit(limit));
        return affected(await q.executeTakeFirst());
      }),
  };
}
