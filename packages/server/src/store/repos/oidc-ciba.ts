import { sql, type Selectable } from 'kysely';
import type { OidcCibaRecord, OidcCibaRepo } from '../ports/index.ts';
import type { OidcCibaTable } from '../schema.ts';
import { type Db, affected, numOrNull } from './db.ts';

/** What a `slow_down` adds to the interval (RFC 8628 §3.5, CIBA §11). */
const SLOW_DOWN_STEP_SEC = 5;

const toRecord = (r: Selectable<OidcCibaTable>): OidcCibaRecord => ({
  idHash: r.id_hash,
  clientId: r.client_id,
  txnId: r.txn_id,
  agentId: r.agent_id,
  userId: r.user_id,
  site: r.site,
  scopes: JSON.parse(r.scopes) as string[],
  intervalSec: Number(r.interval_sec),
  lastPollAt: numOrNull(r.last_poll_at),
  consumedAt: numOrNull(r.consumed_at),
  createdAt: Number(r.created_at),
  expiresAt: Number(r.expires_at),
});

export function oidcCibaRepo(db: Db): OidcCibaRepo {
  return {
    async create(c) {
      await db.insertInto('oidc_ciba').values({
        id_hash: c.idHash, client_id: c.clientId, txn_id: c.txnId, agent_id: c.agentId, user_id: c.userId, site: c.site,
        scopes: JSON.stringify(c.scopes), interval_sec: c.intervalSec, last_poll_at: c.lastPollAt, consumed_at: c.consumedAt,
        created_at: c.createdAt, expires_at: c.expiresAt,
      }).execute();
    },
    async byIdHash(idHash) {
      const r = await db.selectFrom('oidc_ciba').selectAll().where('id_hash', '=', idHash).executeTakeFirst();
      return r ? toRecord(r) : undefined;
    },
    async poll(idHash, now) {
      const due = await db.updateTable('oidc_ciba').set({ last_poll_at: now }).where('id_hash', '=', idHash)
        .where((eb) => eb.or([eb('last_poll_at', 'is', null), eb(sql<number>`last_poll_at + interval_sec * 1000`, '<=', now)]))
        .returningAll().executeTakeFirst();
      if (due) return { ok: true, record: toRecord(due) };
      const slowed = await db.updateTable('oidc_ciba').set((eb) => ({ interval_sec: eb('interval_sec', '+', SLOW_DOWN_STEP_SEC), last_poll_at: now }))
        .where('id_hash', '=', idHash).returning('interval_sec').executeTakeFirst();
      return slowed ? { ok: false, slowDown: true, intervalSec: Number(slowed.interval_sec) } : { ok: false, slowDown: false };
    },
    async consume(idHash, now) {
      const r = await db.updateTable('oidc_ciba').set({ consumed_at: now }).where('id_hash', '=', idHash).where('consumed_at', 'is', null).executeTakeFirst();
      return affected(r) === 1;
    },
    async purgeExpired(before) {
      return affected(await db.deleteFrom('oidc_ciba').where('expires_at', '<', before).executeTakeFirst());
    },
  };
}
