import { sql, type Selectable } from 'kysely';
import type { OidcSignInRecord, OidcSignInsRepo } from '../ports/index.ts';
import type { OidcSignInsTable } from '../schema.ts';
import { type Db, affected, numOrNull } from './db.ts';

/** A row as the record it stores (exported for the dialects' own statements: sqlite/ and postgres/sign-in-rotations.ts, token-reads.ts). */
export const signInFromRow = (r: Selectable<OidcSignInsTable>): OidcSignInRecord => ({
  sid: r.sid,
  clientId: r.client_id,
  userId: r.user_id,
  agentId: r.agent_id,
  grantId: r.grant_id,
  site: r.site,
  scopes: JSON.parse(r.scopes) as string[],
  amr: JSON.parse(r.amr) as string[],
  authTime: Number(r.auth_time),
  refreshHash: r.refresh_hash,
  createdAt: Number(r.created_at),
  expiresAt: Number(r.expires_at),
  endedAt: numOrNull(r.ended_at),
  dpopJkt: r.dpop_jkt,
  resource: r.resource ?? null,
});

export function oidcSignInsRepo(db: Db): OidcSignInsRepo {
  return {
    async create(s) {
      const r = await db
        .insertInto('oidc_sign_ins')
        .values({
          sid: s.sid,
          client_id: s.clientId,
          user_id: s.userId,
          agent_id: s.agentId,
          grant_id: s.grantId,
          site: s.site,
          scopes: JSON.stringify(s.scopes),
          amr: JSON.stringify(s.amr),
          auth_time: s.authTime,
          refresh_hash: s.refreshHash,
          created_at: s.createdAt,
          expires_at: s.expiresAt,
          ended_at: s.endedAt,
          dpop_jkt: s.dpopJkt,
          refresh_window_at: null,
          refresh_count: 0,
          resource: s.resource,
        })
        .onConflict((oc) => oc.column('sid').doNothing())
        .executeTakeFirst();
      return Number(r.numInsertedOrUpdatedRows ?? 0n) === 1;
    },
    async bySid(sid) {
      const r = await db.selectFrom('oidc_sign_ins').selectAll().where('sid', '=', sid).executeTakeFirst();
      return r ? signInFromRow(r) : undefined;
    },
    async rotate(sid, currentHash, nextHash, now, limit) {
      const windowOver = sql<boolean>`(refresh_window_at is null or refresh_window_at <= ${now - limit.windowMs})`;
      const r = await db
        .updateTable('oidc_sign_ins')
        .set({
          refresh_hash: nextHash,
          refresh_window_at: sql<number>`case when ${windowOver} then ${now} else refresh_window_at end`,
          refresh_count: sql<number>`case when ${windowOver} then 1 else refresh_count + 1 end`,
        })
        .where('sid', '=', sid)
        .where('refresh_hash', '=', currentHash)
        .where('ended_at', 'is', null)
        .where('expires_at', '>', now)
        .where(sql<boolean>`(${windowOver} or refresh_count < ${limit.max})`)
        .returningAll()
        .executeTakeFirst();
      return r ? signInFromRow(r) : undefined;
    },
    async refreshLimitedUntil(sid, now, limit) {
      const r = await db.selectFrom('oidc_sign_ins').select(['refresh_window_at', 'refresh_count']).where('sid', '=', sid).executeTakeFirst();
      const start = r ? numOrNull(r.refresh_window_at) : null;
      if (!r || start === null || start <= now - limit.windowMs || Number(r.refresh_count) < limit.max) return undefined;
      return start + limit.windowMs;
    },
    async end(sid, now) {
      const r = await db.updateTable('oidc_sign_ins').set({ ended_at: now }).where('sid', '=', sid).where('ended_at', 'is', null).returningAll().executeTakeFirst();
      return r ? signInFromRow(r) : undefined;
    },
    async endLive(of, now) {
      let q = db.updateTable('oidc_sign_ins').set({ ended_at: now }).where('ended_at', 'is', null).where('expires_at', '>', now).where('agent_id', '=', of.agentId);
      if ('site' in of) q = q.where('site', '=', of.site);
      if ('site' in of && of.resource !== undefined) q = of.resource === null ? q.where('resource', 'is', null) : q.where('resource', '=', of.resource);
      return (await q.returningAll().execute()).map(signInFromRow);
    },
    async listLiveForUser(userId, now) {
      const rows = await db.selectFrom('oidc_sign_ins').selectAll().where('user_id', '=', userId).where('ended_at', 'is', null).where('expires_at', '>', now)
        .orderBy('created_at', 'desc').orderBy('sid').limit(1000).execute();
      return rows.map(signInFromRow);
    },
    async purgeEnded(before) {
      const r = await db.deleteFrom('oidc_sign_ins').where((eb) => eb.or([eb('ended_at', '<', before), eb('expires_at', '<', before)])).executeTakeFirst();
      return affected(r);
    },
  };
}
