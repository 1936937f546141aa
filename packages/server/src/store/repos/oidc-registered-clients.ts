import type { Selectable } from 'kysely';
import type { OidcRegisteredClientRecord, OidcRegisteredClientsRepo } from '../ports/index.ts';
import type { OidcRegisteredClientsTable } from '../schema.ts';
import type { Db } from './db.ts';

const toRecord = (r: Selectable<OidcRegisteredClientsTable>): OidcRegisteredClientRecord => ({
  id: r.id,
  name: r.name,
  redirectUris: JSON.parse(r.redirect_uris) as string[],
  clientUri: r.client_uri,
  logoUri: r.logo_uri,
  createdAt: Number(r.created_at),
});

export function oidcRegisteredClientsRepo(db: Db): OidcRegisteredClientsRepo {
  return {
    async create(c) {
      await db
        .insertInto('oidc_registered_clients')
        .values({ id: c.id, name: c.name, redirect_uris: JSON.stringify(c.redirectUris), client_uri: c.clientUri, logo_uri: c.logoUri, created_at: c.createdAt })
        .execute();
    },
    async byId(id) {
      const r = await db.selectFrom('oidc_registered_clients').selectAll().where('id', '=', id).executeTakeFirst();
      return r ? toRecord(r) : undefined;
    },
  };
}
