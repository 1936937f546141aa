import type { Selectable } from 'kysely';
import type { EmailTokenPurpose, EmailTokenRecord, EmailTokensRepo } from '../ports/index.ts';
import type { EmailTokensTable } from '../schema.ts';
import { type Db, affected, numOrNull } from './db.ts';

const toRecord = (r: Selectable<EmailTokensTable>): EmailTokenRecord => ({
  tokenHash: r.token_hash,
  purpose: r.purpose as EmailTokenPurpose,
  userId: r.user_id,
  email: r.email,
  subject: r.subject,
  createdAt: Number(r.created_at),
  expiresAt: Number(r.expires_at),
  usedAt: numOrNull(r.used_at),
});

export function emailTokensRepo(db: Db): EmailTokensRepo {
  return {
    async create(t) {
      await db
        .insertInto('email_tokens')
        .values({ token_hash: t.tokenHash, purpose: t.purpose, user_id: t.userId, email: t.email, subject: t.subject, created_at: t.createdAt, expires_at: t.expiresAt, used_at: null })
        .execute();
    },
    async peek(tokenHash, purpose, now) {
      const r = await db
        .selectFrom('email_tokens')
        .selectAll()
        .where('token_hash', '=', tokenHash)
        .where('purpose', '=', purpose)
        .where('used_at', 'is', null)
        .where('expires_at', '>', now)
        .executeTakeFirst();
      return r && toRecord(r);
    },
    async consume(tokenHash, purpose, now, opts) {
      // One UPDATE ... WHERE used_at IS NULL RETURNING: the row lock (PostgreSQL) or the single
      // writer (SQLite) lets exactly one caller see the row come back. With `sameEmail`, the
      // account's current address is compared in the same statement.
      let q = db
        .updateTable('email_tokens')
        .set({ used_at: now })
        .where('token_hash', '=', tokenHash)
        .where('purpose', '=', purpose)
        .where('used_at', 'is', null)
        .where('expires_at', '>', now);
      if (opts.sameEmail) {
        q = q.where(({ exists, selectFrom, ref }) =>
          exists(selectFrom('users').select('users.id').whereRef('users.id', '=', ref('email_tokens.user_id')).whereRef('users.email', '=', ref('email_tokens.email'))));
      }
      const r = await q.returningAll().executeTakeFirst();
      return r && toRecord(r);
    },
    async revokeForUser(userId, purpose, now) {
      const r = await db.updateTable('email_tokens').set({ used_at: now }).where('user_id', '=', userId).where('purpose', '=', purpose).where('used_at', 'is', null).executeTakeFirst();
      return affected(r);
    },
    async purgeExpired(before) {
      return affected(await db.deleteFrom('email_tokens').where('expires_at', '<', before).executeTakeFirst());
    },
    async deleteForUser(userId) {
      return affected(await db.deleteFrom('email_tokens').where('user_id', '=', userId).executeTakeFirst());
    },
  };
}
