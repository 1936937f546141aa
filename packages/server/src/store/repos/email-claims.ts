import type { Selectable } from 'kysely';
import type { EmailClaimRecord, EmailClaimsRepo } from '../ports/index.ts';
import type { EmailClaimsTable } from '../schema.ts';
import { type Db, affected, numOrNull } from './db.ts';

const toRecord = (r: Selectable<EmailClaimsTable>): EmailClaimRecord => ({
  tokenHash: r.token_hash,
  email: r.email,
  signUp: { passwordHash: r.password_hash, displayName: r.display_name },
  createdAt: Number(r.created_at),
  expiresAt: Number(r.expires_at),
  usedAt: numOrNull(r.used_at),
});

export function emailClaimsRepo(db: Db): EmailClaimsRepo {
  return {
    async create(c) {
      await db
        .insertInto('email_claims')
        .values({ token_hash: c.tokenHash, email: c.email, password_hash: c.signUp.passwordHash, display_name: c.signUp.displayName, created_at: c.createdAt, expires_at: c.expiresAt, used_at: null })
        .execute();
    },
    async peek(tokenHash, now) {
      const r = await db.selectFrom('email_claims').selectAll().where('token_hash', '=', tokenHash).where('used_at', 'is', null).where('expires_at', '>', now).executeTakeFirst();
      return r && toRecord(r);
    },
    async consume(tokenHash, now) {
      // The row lock (PostgreSQL) or the single writer (SQLite) lets exactly one caller see it come back.
      const r = await db
        .updateTable('email_claims')
        .set({ used_at: now })
        .where('token_hash', '=', tokenHash)
        .where('used_at', 'is', null)
        .where('expires_at', '>', now)
        .returningAll()
        .executeTakeFirst();
      return r && toRecord(r);
    },
    async purgeExpired(before) {
      return affected(await db.deleteFrom('email_claims').where('expires_at', '<', before).executeTakeFirst());
    },
  };
}
