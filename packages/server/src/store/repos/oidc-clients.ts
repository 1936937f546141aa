import { type Selectable, type Updateable, sql } from 'kysely';
import type { OidcClientChanges, OidcClientRecord, OidcClientsRepo } from '../ports/index.ts';
import type { OidcClientsTable } from '../schema.ts';
import { type Db, affected, fromBool, numOrNull, toBool } from './db.ts';

/** A row as the record it stores (exported for the dialects' own reads: sqlite/ and postgres/token-reads.ts). */
export const clientFromRow = (r: Selectable<OidcClientsTable>): OidcClientRecord => ({
  id: r.id,
  userId: r.user_id,
  name: r.name,
  redirectUris: JSON.parse(r.redirect_uris) as string[],
  backchannelLogoutUri: r.backchannel_logout_uri,
  isPublic: toBool(Number(r.is_public)),
  secretHash: r.secret_hash,
  secretSetAt: numOrNull(r.secret_set_at),
  verificationToken: r.verification_token,
  verifiedOrigins: JSON.parse(r.verified_origins) as string[],
  verifiedAt: numOrNull(r.verified_at),
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
});

function toColumns(c: OidcClientChanges): Updateable<OidcClientsTable> {
  const set: Updateable<OidcClientsTable> = {};
  if (c.name !== undefined) set.name = c.name;
  if (c.redirectUris !== undefined) set.redirect_uris = JSON.stringify(c.redirectUris);
  if (c.backchannelLogoutUri !== undefined) set.backchannel_logout_uri = c.backchannelLogoutUri;
  if (c.verifiedOrigins !== undefined) set.verified_origins = JSON.stringify(c.verifiedOrigins);
  if (c.verifiedAt !== undefined) set.verified_at = c.verifiedAt;
  if (c.updatedAt !== undefined) set.updated_at = c.updatedAt;
  return set;
}

export function oidcClientsRepo(db: Db): OidcClientsRepo {
  return {
    async create(c) {
      await db
        .insertInto('oidc_clients')
        .values({
          id: c.id,
          user_id: c.userId,
          name: c.name,
          redirect_uris: JSON.stringify(c.redirectUris),
          backchannel_logout_uri: c.backchannelLogoutUri,
          is_public: fromBool(c.isPublic),
          secret_hash: c.secretHash,
          secret_set_at: c.secretSetAt,
          verification_token: c.verificationToken,
          verified_origins: JSON.stringify(c.verifiedOrigins),
          verified_at: c.verifiedAt,
          created_at: c.createdAt,
          updated_at: c.updatedAt,
        })
        .execute();
    },
    async byId(id) {
      const r = await db.selectFrom('oidc_clients').selectAll().where('id', '=', id).executeTakeFirst();
      return r ? clientFromRow(r) : undefined;
    },
    async listForUser(userId) {
      const rows = await db.selectFrom('oidc_clients').selectAll().where('user_id', '=', userId).orderBy('created_at').orderBy('id').execute();
      return rows.map(clientFromRow);
    },
    async listForHost(host, limit) {
      // The JSON text narrows the rows (lower() alike on both dialects: SQLite's LIKE ignores case,
      // PostgreSQL's does not); the parsed URIs decide. A host holds no LIKE wildcard but `_`, escaped.
      const pattern = `%://${host.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      const rows = await db
        .selectFrom('oidc_clients')
        .selectAll()
        .where(sql<boolean>`lower(redirect_uris) LIKE ${pattern} ESCAPE '\\'`)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      const onHost = (uri: string): boolean => URL.canParse(uri) && new URL(uri).host === host;
      return rows.map(clientFromRow).filter((c) => c.redirectUris.some(onHost)).slice(0, limit);
    },
    async countForUser(userId) {
      const r = await db.selectFrom('oidc_clients').select((eb) => eb.fn.countAll().as('n')).where('user_id', '=', userId).executeTakeFirstOrThrow();
      return Number(r.n);
    },
    async update(userId, id, changes, expectedRedirectUris) {
      const set = toColumns(changes);
      // Nothing to write: still answer whether the compare-and-set would hold.
      if (Object.keys(set).length === 0) set.id = id;
      // Both sides are JSON.stringify of a string array, so equal arrays are equal texts.
      const r = await db
        .updateTable('oidc_clients')
        .set(set)
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .where('redirect_uris', '=', JSON.stringify(expectedRedirectUris))
        .returningAll()
        .executeTakeFirst();
      return r ? clientFromRow(r) : undefined;
    },
    async replaceSecret(userId, id, secretHash, at) {
      const r = await db
        .updateTable('oidc_clients')
        .set({ secret_hash: secretHash, secret_set_at: at, updated_at: at })
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .where('is_public', '=', 0)
        .executeTakeFirst();
      return affected(r) === 1;
    },
    async delete(userId, id) {
      return affected(await db.deleteFrom('oidc_clients').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst()) === 1;
    },
  };
}
