import type { ServiceSecretsRepo } from '../ports/index.ts';
import { type Db, fromBool, toBool } from './db.ts';

export function serviceSecretsRepo(db: Db): ServiceSecretsRepo {
  const get: ServiceSecretsRepo['get'] = async (name) => {
    const r = await db.selectFrom('service_secrets').selectAll().where('name', '=', name).executeTakeFirst();
    return r ? { name: r.name, value: r.value, encrypted: toBool(Number(r.encrypted)), createdAt: Number(r.created_at) } : undefined;
  };
  return {
    get,
    async putIfAbsent(s) {
      // Two nodes starting together both generate; the first insert wins and both read it back.
      await db
        .insertInto('service_secrets')
        .values({ name: s.name, value: s.value, encrypted: fromBool(s.encrypted), created_at: s.createdAt })
        .onConflict((oc) => oc.column('name').doNothing())
        .execute();
      const stored = await get(s.name);
      if (!stored) throw new Error(`service secret ${s.name} was not stored`);
      return stored;
    },
    async replace(name, value, encrypted) {
      await db.updateTable('service_secrets').set({ value, encrypted: fromBool(encrypted) }).where('name', '=', name).execute();
    },
  };
}
