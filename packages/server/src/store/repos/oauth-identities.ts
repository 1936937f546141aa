import type { Selectable } from 'kysely';
import type { OAuthIdentitiesRepo, OAuthIdentityRecord } from '../ports/index.ts';
import type { OAuthIdentitiesTable } from '../schema.ts';
import { type Db, affected } from './db.ts';

const toRecord = (r: Selectable<OAuthIdentitiesTable>): OAuthIdentityRecord => ({
  issuer: r.issuer,
  subject: r.subject,
  userId: r.user_id,
  provider: r.provider,
  createdAt: Number(r.created_at),
});

export function oauthIdentitiesRepo(db: Db): OAuthIdentitiesRepo {
  return {
    async link(i) {
      // No conflict target: either key (the identity, or the owner's one identity per provider)
      // makes this a no-op, on SQLite and PostgreSQL alike.
      const inserted = await db
        .insertInto('oauth_identities')
        .values({ issuer: i.issuer, subject: i.subject, user_id: i.userId, provider: i.provider, created_at: i.createdAt })
        .onConflict((oc) => oc.doNothing())
        .returning('subject')
        .executeTakeFirst();
      return inserted !== undefined;
    },
    async byIdentity(issuer, subject) {
      const r = await db.selectFrom('oauth_identities').selectAll().where('issuer', '=', issuer).where('subject', '=', subject).executeTakeFirst();
      return r && toRecord(r);
    },
    async listForUser(userId) {
      const rows = await db.selectFrom('oauth_identities').selectAll().where('user_id', '=', userId).orderBy('created_at').execute();
      return rows.map(toRecord);
    },
    async unlink(userId, provider) {
      return affected(await db.deleteFrom('oauth_identities').where('user_id', '=', userId).where('provider', '=', provider).executeTakeFirst()) > 0;
    },
    async deleteForUser(userId) {
      return affected(await db.deleteFrom('oauth_identities').where('user_id', '=', userId).executeTakeFirst());
    },
  };
}
