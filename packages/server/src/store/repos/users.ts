import type { Selectable } from 'kysely';
import type { UserRecord, UsersRepo } from '../ports.ts';
import type { UsersTable } from '../schema.ts';
import { type Db, fromBool, toBool } from './db.ts';

const toRecord = (r: Selectable<UsersTable>): UserRecord => ({
  id: r.id,
  email: r.email,
  displayName: r.display_name,
  passwordHash: r.password_hash,
  phone: r.phone,
  phoneVerified: toBool(r.phone_verified),
  createdAt: Number(r.created_at),
});

export function usersRepo(db: Db): UsersRepo {
  return {
    async create(u) {
      const inserted = await db
        .insertInto('users')
        .values({
          id: u.id,
          email: u.email,
          display_name: u.displayName,
          password_hash: u.passwordHash,
          phone: u.phone,
          phone_verified: fromBool(u.phoneVerified),
          created_at: u.createdAt,
        })
        .onConflict((oc) => oc.column('email').doNothing())
        .returning('id')
        .executeTakeFirst();
      return inserted !== undefined;
    },
    async byId(id) {
      const r = await db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
      return r && toRecord(r);
    },
    async byEmail(email) {
      const r = await db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
      return r && toRecord(r);
    },
    async update(id, patch) {
      const values: Partial<UsersTable> = {};
      if (patch.displayName !== undefined) values.display_name = patch.displayName;
      if (patch.phone !== undefined) values.phone = patch.phone;
      if (patch.phoneVerified !== undefined) values.phone_verified = fromBool(patch.phoneVerified);
      if (patch.passwordHash !== undefined) values.password_hash = patch.passwordHash;
      if (Object.keys(values).length === 0) return;
      await db.updateTable('users').set(values).where('id', '=', id).execute();
    },
  };
}
