import type { Selectable } from 'kysely';
import type { PushDeviceKind, PushDeviceRecord, PushDevicesRepo } from '../ports/index.ts';
import type { PushDevicesTable } from '../schema.ts';
import { type Db, affected, numOrNull } from './db.ts';

const toRecord = (r: Selectable<PushDevicesTable>): PushDeviceRecord => ({
  id: r.id,
  userId: r.user_id,
  kind: r.kind as PushDeviceKind,
  address: r.address,
  p256dh: r.p256dh,
  auth: r.auth,
  name: r.name,
  createdAt: Number(r.created_at),
  lastUsedAt: numOrNull(r.last_used_at),
  failures: Number(r.failures),
  dampedUntil: numOrNull(r.damped_until),
});

export function pushDevicesRepo(db: Db): PushDevicesRepo {
  return {
    async upsert(d) {
      const row = await db
        .insertInto('push_devices')
        .values({ id: d.id, user_id: d.userId, kind: d.kind, address: d.address, p256dh: d.p256dh, auth: d.auth, name: d.name, created_at: d.createdAt, last_used_at: d.lastUsedAt })
        .onConflict((oc) =>
          oc.columns(['kind', 'address']).doUpdateSet((eb) => ({
            user_id: eb.ref('excluded.user_id'),
            p256dh: eb.ref('excluded.p256dh'),
            auth: eb.ref('excluded.auth'),
            name: eb.ref('excluded.name'),
          })),
        )
        .returningAll()
        .executeTakeFirstOrThrow();
      return toRecord(row);
    },
    async byId(id) {
      const r = await db.selectFrom('push_devices').selectAll().where('id', '=', id).executeTakeFirst();
      return r ? toRecord(r) : undefined;
    },
    async listForUser(userId) {
      const rows = await db.selectFrom('push_devices').selectAll().where('user_id', '=', userId).orderBy('created_at').orderBy('id').execute();
      return rows.map(toRecord);
    },
    async delete(userId, id) {
      return affected(await db.deleteFrom('push_devices').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst()) === 1;
    },
    async deleteWebPush(userId, endpoint) {
      let q = db.deleteFrom('push_devices').where('user_id', '=', userId).where('kind', '=', 'webpush');
      if (endpoint !== null) q = q.where('address', '=', endpoint);
      return (await q.returningAll().execute()).map(toRecord);
    },
    async deleteById(id) {
      return affected(await db.deleteFrom('push_devices').where('id', '=', id).executeTakeFirst()) === 1;
    },
    async deleteForUser(userId) {
      return affected(await db.deleteFrom('push_devices').where('user_id', '=', userId).executeTakeFirst());
    },
    async touch(id, at) {
      await db.updateTable('push_devices').set({ last_used_at: at, failures: 0, damped_until: null }).where('id', '=', id).execute();
    },
    async recordFailure(id) {
      const r = await db.updateTable('push_devices').set((eb) => ({ failures: eb('failures', '+', 1) })).where('id', '=', id).returning('failures').executeTakeFirst();
      return r === undefined ? undefined : Number(r.failures);
    },
    async damp(id, until) {
      await db
        .updateTable('push_devices')
        .set({ damped_until: until })
        .where('id', '=', id)
        .where((eb) => eb.or([eb('damped_until', 'is', null), eb('damped_until', '<', until)]))
        .execute();
    },
  };
}
