import { sql, type Selectable } from 'kysely';
import type { Dialect, NewOutboxMessage, OutboxMessage, OutboxRepo } from '../ports/index.ts';
import type { OutboxTable } from '../schema.ts';
import { type Db, SQLITE_PURGE_CHUNK, affected, numOrNull, purgeInChunks } from './db.ts';

const toMessage = (r: Selectable<OutboxTable>): OutboxMessage => ({
  id: Number(r.id),
  userId: r.user_id,
  channel: r.channel,
  kind: r.kind,
  payload: JSON.parse(r.payload) as Record<string, unknown>,
  createdAt: Number(r.created_at),
  sentAt: numOrNull(r.sent_at),
  deviceId: r.device_id,
  topic: r.topic,
  attempts: Number(r.attempts),
  nextAttemptAt: Number(r.next_attempt_at),
  expiresAt: numOrNull(r.expires_at),
  failedAt: numOrNull(r.failed_at),
  lastError: r.last_error,
});

const toRow = (m: NewOutboxMessage) => ({
  user_id: m.userId,
  channel: m.channel,
  kind: m.kind,
  payload: JSON.stringify(m.payload),
  created_at: m.createdAt,
  sent_at: null,
  device_id: m.deviceId ?? null,
  topic: m.topic ?? null,
  next_attempt_at: m.nextAttemptAt ?? m.createdAt,
  expires_at: m.expiresAt ?? null,
  locked_by: null,
  locked_until: null,
  failed_at: null,
  last_error: null,
});

/** Rows per INSERT: well under SQLite's 32766 bound variables and PostgreSQL's 65535. */
const INSERT_CHUNK = 500;

export function outboxRepo(db: Db, dialect: Dialect): OutboxRepo {
  return {
    async add(m) {
      const r = await db.insertInto('outbox').values(toRow(m)).returning('id').executeTakeFirstOrThrow();
      return Number(r.id);
    },
    async addMany(messages) {
      for (let i = 0; i < messages.length; i += INSERT_CHUNK) {
        await db.insertInto('outbox').values(messages.slice(i, i + INSERT_CHUNK).map(toRow)).execute();
      }
    },
    async list(filter) {
      let q = db.selectFrom('outbox').selectAll();
      if (filter.userId !== undefined) q = q.where('user_id', '=', filter.userId);
      if (filter.kind !== undefined) q = q.where('kind', '=', filter.kind);
      if (filter.topic !== undefined) q = q.where('topic', '=', filter.topic);
      const rows = await q.orderBy('id', 'desc').limit(filter.limit ?? 100).execute();
      return rows.map(toMessage);
    },
    async claimDue(holder, now, leaseMs, limit, fairness) {
      // The due rows are picked and claimed in one statement. On PostgreSQL, SKIP LOCKED lets racing
      // nodes take disjoint rows instead of queueing on the same ones; the outer WHERE re-checks the
      // claim on the row's latest version. SQLite runs one writer at a time, so the statement is atomic.
      // PostgreSQL refuses FOR UPDATE beside window functions, so the ranking is a subquery and the
      // rows it picks are locked by the query around it.
      //
      // Fairness (issue 22): `device_turn` numbers each device's due messages (oldest first),
      // `owner_turn` each owner's (decisions first, then by device turn, so every device's first
      // message before any device's second); the claim takes turn 1 of every owner before any turn 2.
      // `busy` is what the owner already has under live claims (this node's sends in flight and other
      // nodes'): turns beyond `perOwner - busy` wait for those to finish.
      const perOwner = fairness?.perOwner ?? limit;
      // Whose turn a message takes: its owner's; a back-channel logout's, the relying party's (its
      // address was chosen by the client's owner, not by the owner whose session ended), so one
      // client whose logout endpoint never answers holds at most `perOwner` sends, however many owners.
      const clientId = dialect === 'postgres' ? sql`(payload::json ->> 'client_id')` : sql`json_extract(payload, '$.client_id')`;
      const owner = sql`CASE WHEN channel = 'backchannel' THEN 'client:' || COALESCE(${clientId}, '') ELSE COALESCE(user_id, '') END`;
      const skipLocked = dialect === 'postgres' ? sql`FOR UPDATE SKIP LOCKED` : sql``;
      const result = await sql<Selectable<OutboxTable>>`
        UPDATE outbox SET locked_by = ${holder}, locked_until = ${now + leaseMs}, attempts = attempts + 1
        WHERE id IN (
          SELECT id FROM outbox WHERE id IN (
            SELECT ranked.id FROM (
              SELECT due.id, due.next_attempt_at, COALESCE(live.busy, 0) AS busy,
                ROW_NUMBER() OVER (PARTITION BY due.owner ORDER BY due.later, due.device_turn, due.next_attempt_at, due.id) AS owner_turn
              FROM (
                SELECT id, next_attempt_at, ${owner} AS owner,
                  CASE WHEN kind IN ('approval', 'dismiss', 'takeover', 'test', 'logout') THEN 0 ELSE 1 END AS later,
                  ROW_NUMBER() OVER (PARTITION BY ${owner}, COALESCE(device_id, '') ORDER BY next_attempt_at, id) AS device_turn
                FROM outbox
                WHERE sent_at IS NULL AND failed_at IS NULL AND next_attempt_at <= ${now}
                  AND (locked_until IS NULL OR locked_until <= ${now})
              ) due
              LEFT JOIN (
                SELECT ${owner} AS owner, COUNT(*) AS busy FROM outbox
                WHERE sent_at IS NULL AND failed_at IS NULL AND locked_until > ${now}
                GROUP BY 1
              ) live ON live.owner = due.owner
            ) ranked
            WHERE ranked.owner_turn + ranked.busy <= ${perOwner}
            ORDER BY ranked.owner_turn, ranked.next_attempt_at, ranked.id
            LIMIT ${limit}
          )
          ${skipLocked}
        )
        AND sent_at IS NULL AND failed_at IS NULL AND (locked_until IS NULL OR locked_until <= ${now} OR locked_by = ${holder})
        RETURNING *`.execute(db);
      return result.rows.map(toMessage).sort((a, b) => a.id - b.id);
    },
    async finish(id, holder, end) {
      const set = 'sentAt' in end
        ? { sent_at: end.sentAt, locked_by: null, locked_until: null, last_error: null }
        : 'failedAt' in end
          ? { failed_at: end.failedAt, locked_by: null, locked_until: null, last_error: end.error }
          : { next_attempt_at: end.retryAt, locked_by: null, locked_until: null, last_error: end.error };
      const r = await db
        .updateTable('outbox')
        .set(set)
        .where('id', '=', id)
        .where('locked_by', '=', holder)
        .where('sent_at', 'is', null)
        .where('failed_at', 'is', null)
        .executeTakeFirst();
      return affected(r) === 1;
    },
    async settleTopic(topic, now, kinds) {
      await db
        .updateTable('outbox')
        .set({ failed_at: now, last_error: 'superseded: answered or expired before delivery' })
        .where('topic', '=', topic)
        .where('kind', '=', kinds.cancel)
        .where('sent_at', 'is', null)
        .where('failed_at', 'is', null)
        .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
        .execute();
      // One being sent now is not touched, but it may not come back: should this send fail, its
      // retry finds it expired and gives it up, so no approval arrives after its dismissal.
      await db
        .updateTable('outbox')
        .set({ expires_at: now })
        .where('topic', '=', topic)
        .where('kind', '=', kinds.cancel)
        .where('sent_at', 'is', null)
        .where('failed_at', 'is', null)
        .execute();
      await db
        .updateTable('outbox')
        .set({ next_attempt_at: now })
        .where('topic', '=', topic)
        .where('kind', '=', kinds.expedite)
        .where('sent_at', 'is', null)
        .where('failed_at', 'is', null)
        .where('next_attempt_at', '>', now)
        .execute();
    },
    async cancelForDevice(deviceId, now, error) {
      const r = await db
        .updateTable('outbox')
        .set({ failed_at: now, last_error: error })
        .where('device_id', '=', deviceId)
        .where('sent_at', 'is', null)
        .where('failed_at', 'is', null)
        .executeTakeFirst();
      return affected(r);
    },
    async deferForDevice(userId, deviceId, until) {
      // By owner first: the outbox_owner_pending index (migration 015) holds the owner's unsent rows.
      const r = await db
        .updateTable('outbox')
        .set({ next_attempt_at: until })
        .where('user_id', '=', userId)
        .where('device_id', '=', deviceId)
        .where('sent_at', 'is', null)
        .where('failed_at', 'is', null)
        .where('next_attempt_at', '<', until)
        .executeTakeFirst();
      return affected(r);
    },
    async dropOverBudget(userId, kind, keep, now, error) {
      // The newest `keep` stay; SQLite needs a LIMIT before an OFFSET (-1: no limit).
      const rest = dialect === 'sqlite' ? sql`LIMIT -1 OFFSET ${keep}` : sql`OFFSET ${keep}`;
      const unclaimed = sql`sent_at IS NULL AND failed_at IS NULL AND (locked_until IS NULL OR locked_until <= ${now})`;
      const r = await sql`
        UPDATE outbox SET failed_at = ${now}, last_error = ${error}
        WHERE id IN (
          SELECT id FROM outbox WHERE user_id = ${userId} AND kind = ${kind} AND ${unclaimed}
          ORDER BY id DESC ${rest}
        )
        AND ${unclaimed}`.execute(db);
      return Number(r.numAffectedRows ?? 0n);
    },
    async countPending() {
      const r = await db.selectFrom('outbox').select((eb) => eb.fn.countAll<number | string | bigint>().as('n'))
        .where('sent_at', 'is', null).where('failed_at', 'is', null).executeTakeFirstOrThrow();
      return Number(r.n);
    },
    async purgeEnded(before) {
      // Sent and given-up rows separately, each an index range (outbox_sent, outbox_failed: migration
      // 012); on SQLite in chunks, so a week of a busy outbox does not hold the event loop.
      const chunk = dialect === 'sqlite' ? SQLITE_PURGE_CHUNK : undefined;
      let total = 0;
      for (const column of ['sent_at', 'failed_at'] as const) {
        total += await purgeInChunks(chunk, async (limit) => {
          const q = limit === undefined
            ? db.deleteFrom('outbox').where(column, '<', before)
            : db.deleteFrom('outbox').where('id', 'in', db.selectFrom('outbox').select('id').where(column, '<', before).limit(limit));
          return affected(await q.executeTakeFirst());
        });
      }
      return total;
    },
    async deletePendingForUser(userId, keepChannels) {
      let q = db.deleteFrom('outbox').where('user_id', '=', userId).where('sent_at', 'is', null).where('failed_at', 'is', null);
      if (keepChannels.length > 0) q = q.where('channel', 'not in', [...keepChannels]);
      return affected(await q.executeTakeFirst());
    },
  };
}
