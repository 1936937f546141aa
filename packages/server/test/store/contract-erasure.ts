import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type OpenStore, useStore } from './use-store.ts';

let n = 0;
const uniq = (p: string): string => `${p}${Date.now().toString(36)}${(n++).toString(36)}`;

/**
 * The storage contract of account deletion (domain/privacy): each repository's erasure method takes
 * only the owner's rows, on every backend, and all of them roll back together.
 */
export function erasureContract(name: string, open: OpenStore): void {
  describe(`store contract (account erasure): ${name}`, () => {
    const store = useStore(open);

    const newUser = async () => {
      const user = { id: uniq('u_'), email: `${uniq('u')}@example.com`, displayName: 'Ann', passwordHash: 'argon2-hash', phone: '+15550100', phoneVerified: true, createdAt: 1000 };
      assert.equal(await store.users.create(user), true);
      return user;
    };

    /** One row of each erasable kind for `userId`. */
    const fill = async (userId: string) => {
      await store.passkeys.create({ id: uniq('dev_'), userId, credentialId: uniq('cred'), publicKey: 'pk', counter: 0, transports: [], name: 'Key', createdAt: 1, lastUsedAt: null });
      await store.pushDevices.upsert({ id: uniq('dv_'), userId, kind: 'fcm', address: uniq('fcm'), p256dh: null, auth: null, name: 'Phone', createdAt: 1, lastUsedAt: null });
      await store.notifications.add({ id: uniq('n_'), userId, type: 'note', title: 't', body: 'b', createdAt: 1, readAt: null, txnId: null, takeoverId: null });
      await store.notifySettings.put({ userId, approvals: true, notes: true, sessionNotices: true, quietHours: null, updatedAt: 1 });
      await store.emailTokens.create({ tokenHash: uniq('h'), purpose: 'verify_email', userId, email: 'a@example.com', subject: null, createdAt: 1, expiresAt: 10_000 });
      await store.activity.add({ userId, agentId: 'ag_1', site: 'shop.example', action: 'agent.created', detail: { name: 'free text' }, ip: '203.0.113.9', createdAt: 5 });
      await store.outbox.addMany([
        { userId, channel: 'fcm', kind: 'note', payload: { text: 'x' }, createdAt: 1 },
        { userId, channel: 'backchannel', kind: 'logout', payload: { sid: 's' }, createdAt: 1 },
      ]);
    };

    it('each erasure method takes the owner\'s rows and no one else\'s', async () => {
      const gone = await newUser();
      const kept = await newUser();
      await fill(gone.id);
      await fill(kept.id);
      const sent = await store.outbox.add({ userId: gone.id, channel: 'fcm', kind: 'note', payload: {}, createdAt: 1 });
      const [claimed] = (await store.outbox.claimDue('node', 2, 60_000, 1000)).filter((m) => m.id === sent);
      assert.ok(claimed);
      assert.equal(await store.outbox.finish(sent, 'node', { sentAt: 3 }), true);

      assert.equal(await store.passkeys.deleteForUser(gone.id), 1);
      assert.equal(await store.pushDevices.deleteForUser(gone.id), 1);
      assert.equal(await store.notifications.deleteForUser(gone.id), 1);
      await store.notifySettings.deleteForUser(gone.id);
      assert.equal(await store.emailTokens.deleteForUser(gone.id), 1);
      assert.equal(await store.outbox.deletePendingForUser(gone.id, ['backchannel']), 1);
      assert.equal(await store.activity.anonymiseForUser(gone.id), 1);
      assert.equal(await store.users.erase(gone.id, `${uniq('deleted-')}@invalid`), true);
      assert.equal(await store.users.erase(uniq('u_nobody'), `${uniq('deleted-')}@invalid`), false);

      assert.deepEqual(await store.passkeys.listForUser(gone.id), []);
      assert.deepEqual(await store.pushDevices.listForUser(gone.id), []);
      assert.deepEqual(await store.notifications.list(gone.id, { before: 0, limit: 10, since: 0 }), []);
      assert.equal(await store.notifySettings.get(gone.id), undefined);
      const left = await store.outbox.list({ userId: gone.id });
      assert.deepEqual(left.map((m) => m.channel).sort(), ['backchannel', 'fcm'], 'the logout and the message already sent stay');
      assert.ok(left.find((m) => m.channel === 'fcm')?.sentAt);
      const [record] = await store.activity.list(gone.id, { before: 0, limit: 10 });
      assert.deepEqual(record && { ...record }, { seq: 1, userId: gone.id, agentId: 'ag_1', site: 'shop.example', action: 'agent.created', detail: {}, ip: null, createdAt: 5 });
      const user = await store.users.byId(gone.id);
      assert.deepEqual(user && { displayName: user.displayName, passwordHash: user.passwordHash, phone: user.phone, phoneVerified: user.phoneVerified, emailVerified: user.emailVerified }, { displayName: '', passwordHash: '', phone: null, phoneVerified: false, emailVerified: false });
      assert.equal(await store.users.byEmail(gone.email), undefined);

      assert.equal((await store.passkeys.listForUser(kept.id)).length, 1);
      assert.equal((await store.pushDevices.listForUser(kept.id)).length, 1);
      assert.equal((await store.notifications.list(kept.id, { before: 0, limit: 10, since: 0 })).length, 1);
      assert.ok(await store.notifySettings.get(kept.id));
      assert.equal((await store.outbox.list({ userId: kept.id })).length, 2);
      assert.equal((await store.activity.list(kept.id, { before: 0, limit: 10 }))[0]?.ip, '203.0.113.9');
      assert.equal((await store.users.byId(kept.id))?.email, kept.email);
      assert.equal(await store.emailTokens.deleteForUser(kept.id), 1);
    });

    it('erasure in a transaction that fails leaves everything as it was', async () => {
      const u = await newUser();
      await fill(u.id);
      await assert.rejects(store.transaction(async (repos) => {
        await repos.passkeys.deleteForUser(u.id);
        await repos.pushDevices.deleteForUser(u.id);
        await repos.activity.anonymiseForUser(u.id);
        await repos.outbox.deletePendingForUser(u.id, []);
        await repos.users.erase(u.id, `${uniq('deleted-')}@invalid`);
        throw new Error('abort');
      }), /abort/);
      assert.equal((await store.passkeys.listForUser(u.id)).length, 1);
      assert.equal((await store.pushDevices.listForUser(u.id)).length, 1);
      assert.equal((await store.activity.list(u.id, { before: 0, limit: 10 }))[0]?.ip, '203.0.113.9');
      assert.equal((await store.outbox.list({ userId: u.id })).length, 2);
      assert.equal((await store.users.byId(u.id))?.email, u.email);
    });
  });
}
