import type { SigningKeysRepo } from '../ports/index.ts';
import { type Db, fromBool, toBool, numOrNull } from './db.ts';

export function signingKeysRepo(db: Db): SigningKeysRepo {
  return {
    async create(k) {
      await db
        .insertInto('signing_keys')
        .values({
          kid: k.kid,
          public_jwk: JSON.stringify(k.publicJwk),
          private_jwk: k.privateJwk,
          encrypted: fromBool(k.encrypted),
          created_at: k.createdAt,
          retired_at: k.retiredAt,
        })
        .execute();
    },
    async list() {
      const rows = await db.selectFrom('signing_keys').selectAll().orderBy('created_at', 'desc').orderBy('kid').execute();
      return rows.map((r) => ({
        kid: r.kid,
        publicJwk: JSON.parse(r.public_jwk) as Record<string, unknown>,
        privateJwk: r.private_jwk,
        encrypted: toBool(r.encrypted),
        createdAt: Number(r.created_at),
        retiredAt: numOrNull(r.retired_at),
      }));
    },
    async retireAllExcept(keepKid, now) {
      await db.updateTable('signing_keys').set({ retired_at: now }).where('kid', '!=', keepKid).where('retired_at', 'is', null).execute();
    },
    async dropOlder(keepKid, createdAt) {
      const rows = await db
        .deleteFrom('signing_keys')
        .where('kid', '!=', keepKid)
        .where('created_at', '<=', createdAt)
        .returning('kid')
        .execute();
      return rows.map((r) => r.kid);
    },
    async replacePrivate(kid, privateJwk, encrypted) {
      await db.updateTable('signing_keys').set({ private_jwk: privateJwk, encrypted: fromBool(encrypted) }).where('kid', '=', kid).execute();
    },
  };
}
