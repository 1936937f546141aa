import type { Selectable } from 'kysely';
import type { PasskeyRecord, PasskeysRepo } from '../ports/index.ts';
import type { PasskeysTable } from '../schema.ts';
import { type Db, affected, numOrNull } from './db.ts';

const toRecord = (r: Selectable<PasskeysTable>): PasskeyRecord => ({
  id: r.id,
  userId: r.user_id,
  credentialId: r.credential_id,
  publicKey: r.public_key,
  counter: Number(r.counter),
  transports: JSON.parse(r.transports) as string[],
  name: r.name,
  createdAt: Number(r.created_at),
  lastUsedAt: numOrNull(r.last_used_at),
});

export function passkeysRepo(db: Db): PasskeysRepo {
  return {
    async create(p) {
      const inserted = await db
        .insertInto('passkeys')
        .values({
          id: p.id,
          user_id: p.userId,
          credential_id: p.credentialId,
          public_key: p.publicKey,
          counter: p.counter,
          transports: JSON.stringify(p.transports),
          name: p.name,
          created_at: p.createdAt,
          last_used_at: p.lastUsedAt,
        })
        .onConflict((oc) => oc.column('credential_id').doNothing())
        .returning('id')
        .executeTakeFirst();
      return inserted !== undefined;
    },
    async byCredentialId(credentialId) {
      const r = await db.selectFrom('passkeys').selectAll().where('credential_id', '=', credentialId).executeTakeFirst();
      return r && toRecord(r);
    },
    async listForUser(userId) {
      const rows = await db.selectFrom('passkeys').selectAll().where('user_id', '=', userId).orderBy('created_at').execute();
      return rows.map(toRecord);
    },
    async advanceCounter(id, expected, next, usedAt) {
      const r = await db
        .updateTable('passkeys')
        .set({ counter: next, last_used_at: usedAt })
        .where('id', '=', id)
        .where('counter', '=', expected)
        .executeTakeFirst();
      return affected(r) === 1;
    },
    async delete(userId, id) {
      const r = await db.deleteFrom('passkeys').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
      return affected(r) === 1;
    },
    async deleteCreatedSince(userId, since) {
      const rows = await db.deleteFrom('passkeys').where('user_id', '=', userId).where('created_at', '>=', since).returning('id').execute();
      return rows.map((r) => r.id).sort();
    },
    async deleteForUser(userId) {
      return affected(await db.deleteFrom('passkeys').where('user_id', '=', userId).executeTakeFirst());
    },
  };
}
