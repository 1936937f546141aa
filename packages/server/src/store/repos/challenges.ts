import type { ChallengePurpose, ChallengesRepo } from '../ports/index.ts';
import { type Db, affected } from './db.ts';

export function challengesRepo(db: Db): ChallengesRepo {
  return {
    async create(c) {
      await db
        .insertInto('webauthn_challenges')
        .values({
          challenge: c.challenge,
          purpose: c.purpose,
          user_id: c.userId,
          session_hash: c.sessionHash,
          subject: c.subject,
          expires_at: c.expiresAt,
          used_at: null,
          nonce: c.nonce ?? null,
        })
        .execute();
    },
    async consume(challenge, purpose, now) {
      // One UPDATE ... WHERE used_at IS NULL RETURNING: the row lock (PostgreSQL) or the single
      // writer (SQLite) lets exactly one caller see the row come back.
      const r = await db
        .updateTable('webauthn_challenges')
        .set({ used_at: now })
        .where('challenge', '=', challenge)
        .where('purpose', '=', purpose)
        .where('used_at', 'is', null)
        .where('expires_at', '>', now)
        .returningAll()
        .executeTakeFirst();
      return (
        r && {
          challenge: r.challenge,
          purpose: r.purpose as ChallengePurpose,
          userId: r.user_id,
          sessionHash: r.session_hash,
          subject: r.subject,
          expiresAt: Number(r.expires_at),
          nonce: r.nonce,
        }
      );
    },
    async purgeExpired(now) {
      return affected(await db.deleteFrom('webauthn_challenges').where('expires_at', '<=', now).executeTakeFirst());
    },
  };
}
