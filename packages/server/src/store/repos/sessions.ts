import type { SessionMethod, SessionsRepo } from '../ports/index.ts';
import { type Db, affected } from './db.ts';

export function sessionsRepo(db: Db): SessionsRepo {
  return {
    async create(s) {
      await db
        .insertInto('sessions')
        .values({ token_hash: s.tokenHash, user_id: s.userId, created_at: s.createdAt, expires_at: s.expiresAt, method: s.method })
        .execute();
    },
    async live(tokenHash, now) {
      const r = await db
        .selectFrom('sessions')
        .selectAll()
        .where('token_hash', '=', tokenHash)
        .where('expires_at', '>', now)
        .executeTakeFirst();
      return r && { tokenHash: r.token_hash, userId: r.user_id, createdAt: Number(r.created_at), expiresAt: Number(r.expires_at), method: sessionMethod(r.method) };
    },
    async delete(tokenHash) {
      await db.deleteFrom('sessions').where('token_hash', '=', tokenHash).execute();
    },
    async deleteForUser(userId) {
      await db.deleteFrom('sessions').where('user_id', '=', userId).execute();
    },
    async purgeExpired(now) {
      return affected(await db.deleteFrom('sessions').where('expires_at', '<=', now).executeTakeFirst());
    },
  };
}

/** Anything but a recorded passkey, recovery or identity-provider sign-in counts as a password session: the weaker one. */
const sessionMethod = (m: string): SessionMethod => (m === 'passkey' || m === 'recovery' || m === 'oauth' ? m : 'password');
