import type { Selectable } from 'kysely';
import type { PhoneCodePurpose, PhoneCodeRecord, PhoneCodesRepo, RecoveryCodesRepo } from '../ports/index.ts';
import type { PhoneCodesTable } from '../schema.ts';
import { type Db, affected, numOrNull } from './db.ts';

const toRecord = (r: Selectable<PhoneCodesTable>): PhoneCodeRecord => ({
  id: r.id,
  userId: r.user_id,
  purpose: r.purpose as PhoneCodePurpose,
  phone: r.phone,
  codeHash: r.code_hash,
  attemptsLeft: Number(r.attempts_left),
  createdAt: Number(r.created_at),
  expiresAt: Number(r.expires_at),
  usedAt: numOrNull(r.used_at),
});

export function phoneCodesRepo(db: Db): PhoneCodesRepo {
  return {
    async create(c) {
      await db
        .insertInto('phone_codes')
        .values({ id: c.id, user_id: c.userId, purpose: c.purpose, phone: c.phone, code_hash: c.codeHash, attempts_left: c.attemptsLeft, created_at: c.createdAt, expires_at: c.expiresAt, used_at: null })
        .execute();
    },
    async live(userId, purpose, now) {
      const r = await db
        .selectFrom('phone_codes')
        .selectAll()
        .where('user_id', '=', userId)
        .where('purpose', '=', purpose)
        .where('used_at', 'is', null)
        .where('expires_at', '>', now)
        .where('attempts_left', '>', 0)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .executeTakeFirst();
      return r && toRecord(r);
    },
    async takeAttempt(id, now) {
      // One conditional UPDATE ... RETURNING: racing guesses each take one try, never more than there are.
      const r = await db
        .updateTable('phone_codes')
        .set((eb) => ({ attempts_left: eb('attempts_left', '-', 1) }))
        .where('id', '=', id)
        .where('used_at', 'is', null)
        .where('expires_at', '>', now)
        .where('attempts_left', '>', 0)
        .returningAll()
        .executeTakeFirst();
      return r && toRecord(r);
    },
    async consume(id, now) {
      const r = await db.updateTable('phone_codes').set({ used_at: now }).where('id', '=', id).where('used_at', 'is', null).where('expires_at', '>', now).executeTakeFirst();
      return affected(r) === 1;
    },
    async revokeForUser(userId, purpose, now) {
      return affected(await db.updateTable('phone_codes').set({ used_at: now }).where('user_id', '=', userId).where('purpose', '=', purpose).where('used_at', 'is', null).executeTakeFirst());
    },
    async purgeExpired(before) {
      return affected(await db.deleteFrom('phone_codes').where('expires_at', '<', before).executeTakeFirst());
    },
    async deleteForUser(userId) {
      return affected(await db.deleteFrom('phone_codes').where('user_id', '=', userId).executeTakeFirst());
    },
  };
}

export function recoveryCodesRepo(db: Db): RecoveryCodesRepo {
  return {
    async replace(userId, hashes, at) {
      await db.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
      if (hashes.length > 0) await db.insertInto('recovery_codes').values(hashes.map((h) => ({ code_hash: h, user_id: userId, created_at: at, used_at: null }))).execute();
    },
    async has(userId, codeHash) {
      const r = await db.selectFrom('recovery_codes').select('code_hash').where('code_hash', '=', codeHash).where('user_id', '=', userId).where('used_at', 'is', null).executeTakeFirst();
      return r !== undefined;
    },
    async consume(userId, codeHash, at) {
      const r = await db.updateTable('recovery_codes').set({ used_at: at }).where('code_hash', '=', codeHash).where('user_id', '=', userId).where('used_at', 'is', null).executeTakeFirst();
      return affected(r) === 1;
    },
    async countUnused(userId) {
      const r = await db.selectFrom('recovery_codes').select((eb) => eb.fn.countAll().as('n')).where('user_id', '=', userId).where('used_at', 'is', null).executeTakeFirst();
      return Number(r?.n ?? 0);
    },
    async deleteForUser(userId) {
      return affected(await db.deleteFrom('recovery_codes').where('user_id', '=', userId).executeTakeFirst());
    },
  };
}
