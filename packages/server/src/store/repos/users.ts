import type { Selectable } from 'kysely';
import type { UserRecord, UsersRepo } from '../ports/index.ts';
import type { UsersTable } from '../schema.ts';
import { type Db, affected, fromBool, toBool } from './db.ts';

/** A row as the record it stores (exported for the dialects' own reads: sqlite/ and postgres/token-reads.ts). */
export const userFromRow = (r: Selectable<UsersTable>): UserRecord => ({
  id: r.id,
  email: r.email,
  displayName: r.display_name,
  passwordHash: r.password_hash,
  phone: r.phone,
  phoneVerified: toBool(r.phone_verified),
  createdAt: Number(r.created_at),
  emailVerified: r.email_verified_at !== null,
});

/** A unique-index violation (the email), as better-sqlite3 and pg report it. */
const isUniqueViolation = (e: unknown): boolean => {
  const code = (e as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === '23505';
};

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
          email_verified_at: null,
        })
        .onConflict((oc) => oc.column('email').doNothing())
        .returning('id')
        .executeTakeFirst();
      return inserted !== undefined;
    },
    async byId(id) {
      const r = await db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
      return r && userFromRow(r);
    },
    async byEmail(email) {
      const r = await db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
      return r && userFromRow(r);
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
    async markEmailVerified(id, email, at) {
      // Conditional on the address: an email change committed first makes this a no-op.
      const r = await db.updateTable('users').set({ email_verified_at: at }).where('id', '=', id).where('email', '=', email).executeTakeFirst();
      return affected(r) === 1;
    },
    async changeEmail(id, email) {
      // A taken address is skipped by the statement itself (no error, so a surrounding PostgreSQL
      // transaction stays usable); two accounts taking one free address at the same moment are
      // decided by the unique index, and the loser writes nothing. Unchanged address: nothing to do.
      try {
        const r = await db
          .updateTable('users')
          .set({ email, email_verified_at: null })
          .where('id', '=', id)
          .where('email', '<>', email)
          .where(({ not, exists, selectFrom }) => not(exists(selectFrom('users as other').select('other.id').where('other.email', '=', email))))
          .executeTakeFirst();
        return affected(r) === 1 || (await db.selectFrom('users').select('id').where('id', '=', id).where('email', '=', email).executeTakeFirst()) !== undefined;
      } catch (e) {
        if (isUniqueViolation(e)) return false;
        throw e;
      }
    },
    async releaseUnverified(email, placeholder) {
      // Conditional on the holder not having verified: a verification committed first makes this a
      // no-op. On PostgreSQL a racing caller waits for the row lock, then finds the address gone.
      const r = await db.updateTable('users').set({ email: placeholder, email_verified_at: null }).where('email', '=', email).where('email_verified_at', 'is', null).returning('id').executeTakeFirst();
      return r?.id;
    },
    async erase(id, placeholder) {
      const r = await db
        .updateTable('users')
        .set({ email: placeholder, email_verified_at: null, display_name: '', password_hash: '', phone: null, phone_verified: fromBool(false) })
        .where('id', '=', id)
        .executeTakeFirst();
      return affected(r) === 1;
    },
  };
}
