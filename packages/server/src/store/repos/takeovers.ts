import { type Selectable, sql } from 'kysely';
import type { TakeoverRecord, TakeoverReportKind, TakeoverReportRecord, TakeoversRepo, TakeoverState } from '../ports/index.ts';
import type { TakeoverReportsTable, TakeoversTable } from '../schema.ts';
import { type Db, affected, numOrNull } from './db.ts';

const toRecord = (r: Selectable<TakeoversTable>): TakeoverRecord => ({
  id: r.id,
  agentId: r.agent_id,
  userId: r.user_id,
  url: r.url,
  reason: r.reason,
  tokenHash: r.token_hash,
  state: r.state as TakeoverState,
  relayNode: r.relay_node,
  createdAt: Number(r.created_at),
  expiresAt: Number(r.expires_at),
  endedAt: numOrNull(r.ended_at),
});

const toReport = (r: Selectable<TakeoverReportsTable>): TakeoverReportRecord => ({
  id: r.id,
  agentId: r.agent_id,
  userId: r.user_id,
  site: r.site,
  kind: r.kind as TakeoverReportKind,
  detail: r.detail,
  url: r.url,
  createdAt: Number(r.created_at),
});

export function takeoversRepo(db: Db): TakeoversRepo {
  return {
    async open(t, now) {
      // An open session whose time ran out no longer counts against the agent's one.
      await db.updateTable('takeovers').set({ state: 'expired', ended_at: now }).where('agent_id', '=', t.agentId).where('state', '=', 'open').where('expires_at', '<=', now).execute();
      // No conflict target: the partial unique index (one open per agent) makes a second one a no-op.
      const inserted = await db
        .insertInto('takeovers')
        .values({ id: t.id, agent_id: t.agentId, user_id: t.userId, url: t.url, reason: t.reason, token_hash: t.tokenHash, state: 'open', relay_node: null, created_at: t.createdAt, expires_at: t.expiresAt, ended_at: null })
        .onConflict((oc) => oc.doNothing())
        .returning('id')
        .executeTakeFirst();
      return inserted !== undefined;
    },
    async byId(id) {
      const r = await db.selectFrom('takeovers').selectAll().where('id', '=', id).executeTakeFirst();
      return r && toRecord(r);
    },
    async activeForUser(userId, now) {
      const rows = await db.selectFrom('takeovers').selectAll().where('user_id', '=', userId).where('state', '=', 'open').where('expires_at', '>', now).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
      return rows.map(toRecord);
    },
    async end(id, state, now) {
      return affected(await db.updateTable('takeovers').set({ state, ended_at: now }).where('id', '=', id).where('state', '=', 'open').executeTakeFirst()) === 1;
    },
    async claimRelayNode(id, node) {
      // One statement: on PostgreSQL a racing UPDATE of the row waits and then sees the first's value.
      const r = await db
        .updateTable('takeovers')
        .set({ relay_node: sql<string>`coalesce(relay_node, ${node})` })
        .where('id', '=', id)
        .where('state', '=', 'open')
        .returning('relay_node')
        .executeTakeFirst();
      return r?.relay_node ?? undefined;
    },
    async moveRelayNode(id, from, to) {
      return affected(await db.updateTable('takeovers').set({ relay_node: to }).where('id', '=', id).where('relay_node', '=', from).where('state', '=', 'open').executeTakeFirst()) === 1;
    },
    async statesOf(ids) {
      const states = new Map<string, TakeoverState>();
      for (let i = 0; i < ids.length; i += 500) {
        const rows = await db.selectFrom('takeovers').select(['id', 'state']).where('id', 'in', ids.slice(i, i + 500)).execute();
        for (const r of rows) states.set(r.id, r.state as TakeoverState);
      }
      return states;
    },
    async expiredOpen(now, limit) {
      const rows = await db.selectFrom('takeovers').selectAll().where('state', '=', 'open').where('expires_at', '<=', now).orderBy('expires_at').limit(limit).execute();
      return rows.map(toRecord);
    },
    async addReport(r) {
      await db.insertInto('takeover_reports').values({ id: r.id, agent_id: r.agentId, user_id: r.userId, site: r.site, kind: r.kind, detail: r.detail, url: r.url, created_at: r.createdAt }).execute();
    },
    async reportsForUser(userId, limit) {
      const rows = await db.selectFrom('takeover_reports').selectAll().where('user_id', '=', userId).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
      return rows.map(toReport);
    },
    async purgeBefore(before) {
      return affected(await db.deleteFrom('takeovers').where('expires_at', '<', before).executeTakeFirst());
    },
    async deleteForUser(userId) {
      const a = affected(await db.deleteFrom('takeovers').where('user_id', '=', userId).executeTakeFirst());
      const b = affected(await db.deleteFrom('takeover_reports').where('user_id', '=', userId).executeTakeFirst());
      return a + b;
    },
  };
}
