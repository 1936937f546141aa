import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { OutboxMessage, PushDeviceRecord } from '../../src/store/ports/index.ts';
import { type OpenStore, useStore } from './use-store.ts';

let n = 0;
const uniq = (p: string): string => `${p}${Date.now().toString(36)}${(n++).toString(36)}`;

/** The storage contract of devices, notifications, settings, secrets and the outbox, on every backend. */
export function deliveryContract(name: string, open: OpenStore): void {
  describe(`store contract (delivery): ${name}`, () => {
    const store = useStore(open);

    const device = (over: Partial<PushDeviceRecord> = {}): PushDeviceRecord => ({
      id: uniq('dev_'), userId: uniq('u_'), kind: 'webpush', address: `https://push.example/${uniq('e')}`, p256dh: 'p', auth: 'a', name: 'Phone', createdAt: 10, lastUsedAt: null, failures: 0, dampedUntil: null, ...over,
    });

    it('upserts push devices by kind and address, keeping the id', async () => {
      const first = await store.pushDevices.upsert(device());
      const again = await store.pushDevices.upsert({ ...first, id: uniq('dev_'), p256dh: 'p2', name: 'Renamed' });
      assert.equal(again.id, first.id);
      assert.equal(again.p256dh, 'p2');
      assert.equal(again.name, 'Renamed');
      const sameTokenOtherKind = await store.pushDevices.upsert({ ...first, id: uniq('dev_'), kind: 'fcm', p256dh: null, auth: null });
      assert.notEqual(sameTokenOtherKind.id, first.id);
      const moved = await store.pushDevices.upsert({ ...first, id: uniq('dev_'), userId: 'u_other' });
      assert.equal(moved.id, first.id, 'a browser now signed in to another account keeps one row');
      assert.equal((await store.pushDevices.byId(first.id))?.userId, 'u_other');
    });

    it('racing registrations of one endpoint leave one row', async () => {
      const d = device();
      const results = await Promise.all(Array.from({ length: 10 }, () => store.pushDevices.upsert({ ...d, id: uniq('dev_') })));
      assert.equal(new Set(results.map((r) => r.id)).size, 1);
      assert.equal((await store.pushDevices.listForUser(d.userId)).length, 1);
    });

    it('lists, touches and deletes devices per owner', async () => {
      const a = await store.pushDevices.upsert(device());
      const b = await store.pushDevices.upsert(device({ userId: a.userId, kind: 'fcm', address: uniq('tok'), p256dh: null, auth: null }));
      const c = await store.pushDevices.upsert(device({ userId: a.userId }));
      assert.deepEqual((await store.pushDevices.listForUser(a.userId)).map((d) => d.id).sort(), [a.id, b.id, c.id].sort());
      await store.pushDevices.touch(a.id, 99);
      assert.equal((await store.pushDevices.byId(a.id))?.lastUsedAt, 99);
      assert.equal(await store.pushDevices.delete('u_someone_else', a.id), false);
      assert.equal(await store.pushDevices.delete(a.userId, a.id), true);
      assert.deepEqual((await store.pushDevices.deleteWebPush(a.userId, c.address)).map((d) => d.id), [c.id]);
      const w1 = await store.pushDevices.upsert(device({ userId: a.userId }));
      const w2 = await store.pushDevices.upsert(device({ userId: a.userId }));
      assert.deepEqual((await store.pushDevices.deleteWebPush(a.userId, null)).map((d) => d.id).sort(), [w1.id, w2.id].sort());
      assert.deepEqual((await store.pushDevices.listForUser(a.userId)).map((d) => d.id), [b.id], 'the FCM device stays');
      assert.equal(await store.pushDevices.deleteById(b.id), true);
      assert.equal(await store.pushDevices.deleteById(b.id), false);
    });

    it('keeps the inbox: pages newest first, counts and marks unread, purges old rows', async () => {
      const user = uniq('u_');
      const added = [];
      for (let i = 0; i < 5; i++) {
        added.push(await store.notifications.add({ id: uniq('n_'), userId: user, type: i === 2 ? 'approval' : 'note', title: `t${i}`, body: 'b', createdAt: 1000 + i, readAt: null, txnId: i === 2 ? 't_x' : null, takeoverId: null }));
      }
      assert.ok(added[1]!.seq > added[0]!.seq);
      const page1 = await store.notifications.list(user, { before: 0, limit: 2, since: 0 });
      assert.deepEqual(page1.map((r) => r.title), ['t4', 't3']);
      const page2 = await store.notifications.list(user, { before: page1[1]!.seq, limit: 2, since: 0 });
      assert.deepEqual(page2.map((r) => r.title), ['t2', 't1']);
      assert.deepEqual((await store.notifications.list(user, { before: 0, limit: 10, since: 1003 })).map((r) => r.title), ['t4', 't3']);
      assert.equal(await store.notifications.unreadCount(user, 0), 5);
      assert.equal(await store.notifications.markRead(user, { txnIds: ['t_x'] }, 2000), 1);
      assert.equal(await store.notifications.markRead(user, { ids: [added[0]!.id, added[2]!.id] }, 2000), 1, 'already read ones do not count');
      assert.equal(await store.notifications.markRead('u_other', { all: true }, 2000), 0);
      assert.equal(await store.notifications.markRead(user, { ids: [] }, 2000), 0);
      assert.equal(await store.notifications.unreadCount(user, 0), 3);
      assert.equal(await store.notifications.markRead(user, { all: true }, 2001), 3);
      assert.equal((await store.notifications.list(user, { before: 0, limit: 1, since: 0 }))[0]?.readAt, 2001);
      assert.ok((await store.notifications.purgeOlderThan(1002)) >= 2);
      assert.equal((await store.notifications.list(user, { before: 0, limit: 10, since: 0 })).length, 3);
    });

    it('stores notification settings', async () => {
      const user = uniq('u_');
      assert.equal(await store.notifySettings.get(user), undefined);
      await store.notifySettings.put({ userId: user, approvals: true, notes: false, sessionNotices: true, quietHours: { start: '22:00', end: '07:00', tz: 'Europe/Paris' }, updatedAt: 5 });
      assert.deepEqual(await store.notifySettings.get(user), { userId: user, approvals: true, notes: false, sessionNotices: true, quietHours: { start: '22:00', end: '07:00', tz: 'Europe/Paris' }, updatedAt: 5 });
      await store.notifySettings.put({ userId: user, approvals: true, notes: true, sessionNotices: false, quietHours: null, updatedAt: 6 });
      assert.equal((await store.notifySettings.get(user))?.quietHours, null);
      assert.equal((await store.notifySettings.get(user))?.sessionNotices, false);
    });

    it('keeps the first of racing service secrets', async () => {
      const name = uniq('vapid');
      const stored = await Promise.all(Array.from({ length: 6 }, (_, i) => store.serviceSecrets.putIfAbsent({ name, value: `v${i}`, encrypted: false, createdAt: 1 })));
      assert.equal(new Set(stored.map((s) => s.value)).size, 1);
      await store.serviceSecrets.replace(name, 'cipher', true);
      assert.deepEqual(await store.serviceSecrets.get(name), { name, value: 'cipher', encrypted: true, createdAt: 1 });
    });

    it('claims due outbox messages once, finishes, retries and expires claims', async () => {
      const user = uniq('u_');
      const topic = uniq('t_');
      await store.outbox.addMany([
        { userId: user, channel: 'webpush', kind: 'approval', payload: { n: 1 }, createdAt: 100, deviceId: 'dev_a', topic },
        { userId: user, channel: 'webpush', kind: 'dismiss', payload: { n: 2 }, createdAt: 100, deviceId: 'dev_a', topic, nextAttemptAt: 400_000 },
      ]);
      const mine = (ms: OutboxMessage[]) => ms.filter((m) => m.userId === user);
      const claimed = mine(await store.outbox.claimDue('node-1', 200, 60_000, 100));
      assert.deepEqual(claimed.map((m) => [m.kind, m.attempts]), [['approval', 1]]);
      assert.deepEqual(mine(await store.outbox.claimDue('node-2', 201, 60_000, 100)), [], 'a live claim is not taken');
      assert.equal(await store.outbox.finish(claimed[0]!.id, 'node-2', { sentAt: 300 }), false, 'only the holder finishes');
      assert.equal(await store.outbox.finish(claimed[0]!.id, 'node-1', { retryAt: 1000, error: '500' }), true);
      assert.deepEqual(mine(await store.outbox.claimDue('node-2', 999, 60_000, 100)), []);
      const again = mine(await store.outbox.claimDue('node-2', 1000, 500, 100));
      assert.deepEqual(again.map((m) => m.attempts), [2]);
      // node-2 dies mid-send: after its claim runs out, node-3 takes the message.
      const taken = mine(await store.outbox.claimDue('node-3', 1500, 60_000, 100));
      assert.deepEqual(taken.map((m) => [m.id, m.attempts]), [[claimed[0]!.id, 3]]);
      assert.equal(await store.outbox.finish(taken[0]!.id, 'node-2', { sentAt: 1600 }), false);
      assert.equal(await store.outbox.finish(taken[0]!.id, 'node-3', { sentAt: 1600 }), true);
      assert.equal(await store.outbox.finish(taken[0]!.id, 'node-3', { failedAt: 1601, error: 'x' }), false, 'ended stays ended');
      // The answer: the dismissal is due now.
      await store.outbox.settleTopic(topic, 2000, { cancel: 'approval', expedite: 'dismiss' });
      const dismiss = mine(await store.outbox.claimDue('node-1', 2000, 60_000, 100));
      assert.deepEqual(dismiss.map((m) => m.kind), ['dismiss']);
      const [row] = await store.outbox.list({ topic, kind: 'approval' });
      assert.equal(row?.sentAt, 1600);
    });

    it('an answer cancels undelivered approvals but not one being sent', async () => {
      const user = uniq('u_');
      const topic = uniq('t_');
      await store.outbox.addMany([
        { userId: user, channel: 'webpush', kind: 'approval', payload: {}, createdAt: 100, deviceId: 'dev_a', topic },
        { userId: user, channel: 'fcm', kind: 'approval', payload: {}, createdAt: 100, deviceId: 'dev_b', topic, nextAttemptAt: 5000 },
      ]);
      const sending = (await store.outbox.claimDue('node-1', 200, 60_000, 100)).filter((m) => m.topic === topic);
      assert.equal(sending.length, 1);
      await store.outbox.settleTopic(topic, 300, { cancel: 'approval', expedite: 'dismiss' });
      const rows = await store.outbox.list({ topic });
      const waiting = rows.find((r) => r.deviceId === 'dev_b');
      assert.equal(waiting?.failedAt, 300);
      assert.match(waiting?.lastError ?? '', /superseded/);
      assert.equal(rows.find((r) => r.deviceId === 'dev_a')?.failedAt, null);
      assert.equal(rows.find((r) => r.deviceId === 'dev_a')?.expiresAt, 300, 'the one in flight may not be retried');
      assert.equal(await store.outbox.finish(sending[0]!.id, 'node-1', { sentAt: 400 }), true);
    });

    it('racing claimers on many connections each get distinct messages', async () => {
      const user = uniq('u_');
      const messages = Array.from({ length: 60 }, (_, i) => ({ userId: user, channel: 'webpush', kind: 'note', payload: { i }, createdAt: 50, deviceId: `dev_${i}` }));
      await store.outbox.addMany(messages);
      const claims = await Promise.all(Array.from({ length: 6 }, (_, i) => store.outbox.claimDue(`node-${i}`, 60, 60_000, 15)));
      const ids = claims.flat().filter((m) => m.userId === user).map((m) => m.id);
      assert.equal(new Set(ids).size, ids.length, 'no message claimed twice');
      const rest = (await store.outbox.claimDue('node-last', 60, 60_000, 100)).filter((m) => m.userId === user);
      assert.equal(ids.length + rest.length, 60, 'every message claimed once in all');
    });

    it('claims fairly: every owner\'s first message before anyone\'s second, decisions first, at most perOwner under live claims', async () => {
      const now = 50_000_000;
      // Whatever earlier tests left due is claimed away first (for ever), so only this test's rows compete.
      await store.outbox.claimDue('sweeper', now, 1e12, 100_000);
      const hostile = uniq('u_');
      const ordinary = uniq('u_');
      // The hostile owner's 40 notes to 4 devices are older than the ordinary owner's approval.
      await store.outbox.addMany(Array.from({ length: 40 }, (_, i) => ({ userId: hostile, channel: 'webpush', kind: 'note', payload: { i }, createdAt: now - 1000 + i, deviceId: `dev_h${i % 4}` })));
      await store.outbox.addMany([
        { userId: hostile, channel: 'webpush', kind: 'approval', payload: {}, createdAt: now - 10, deviceId: 'dev_h3' },
        { userId: ordinary, channel: 'webpush', kind: 'approval', payload: {}, createdAt: now - 5, deviceId: 'dev_o' },
      ]);
      const first = await store.outbox.claimDue('node-1', now, 60_000, 3, { perOwner: 2 });
      assert.deepEqual(first.map((m) => [m.userId, m.kind]).sort(), [[hostile, 'approval'], [hostile, 'note'], [ordinary, 'approval']].sort(), 'the ordinary owner\'s approval is in the first claim; the hostile owner\'s approval before its notes');
      const hostileNote = first.find((m) => m.kind === 'note');
      assert.notEqual(hostileNote?.deviceId, 'dev_h3', 'another device than the approval\'s: devices take turns');
      // The hostile owner has 2 under live claims: nothing more of it until one ends.
      assert.deepEqual(await store.outbox.claimDue('node-2', now, 60_000, 10, { perOwner: 2 }), []);
      assert.equal(await store.outbox.finish(hostileNote!.id, 'node-1', { retryAt: now + 10_000, error: 'timeout' }), true);
      const next = await store.outbox.claimDue('node-2', now, 60_000, 10, { perOwner: 2 });
      assert.equal(next.length, 1);
      assert.equal(next[0]?.userId, hostile);
      // Devices take turns: the four devices' first notes before any second one.
      const turns = [hostileNote!.deviceId, next[0]!.deviceId];
      for (let i = 0; i < 2; i++) {
        const [m] = await store.outbox.claimDue('node-3', now, 60_000, 10, { perOwner: 3 });
        turns.push(m?.deviceId ?? null);
        await store.outbox.finish(m!.id, 'node-3', { sentAt: now });
      }
      assert.equal(new Set(turns).size, 4, `one note to each device first: ${turns.join(', ')}`);
    });

    it('back-channel logouts take their relying party\'s turns, not their owners\'', async () => {
      const now = 60_000_000;
      await store.outbox.claimDue('sweeper', now, 1e12, 100_000);
      const logout = (client: string, userId: string, at: number) => ({ userId, channel: 'backchannel', kind: 'logout', payload: { uri: `https://${client}.example/logout`, client_id: client, sub: 's', sid: 'x' }, createdAt: at });
      const slow = uniq('c_slow');
      const other = uniq('c_other');
      // Ten owners' logouts to the slow client, all older than one to another client.
      await store.outbox.addMany(Array.from({ length: 10 }, (_, i) => logout(slow, uniq('u_'), now - 1000 + i)));
      await store.outbox.add(logout(other, uniq('u_'), now - 10));
      const claimed = await store.outbox.claimDue('node-1', now, 60_000, 5, { perOwner: 2 });
      assert.deepEqual(claimed.map((m) => m.payload.client_id).sort(), [other, slow, slow].sort(), 'at most 2 of the slow client\'s, and the other client\'s at once');
    });

    it('damps a failing device: failures count up, damped_until only grows, a delivered push resets both; its messages wait', async () => {
      const d = await store.pushDevices.upsert(device());
      assert.equal(await store.pushDevices.recordFailure(d.id), 1);
      assert.equal(await store.pushDevices.recordFailure(d.id), 2);
      assert.equal(await store.pushDevices.recordFailure('dev_none'), undefined);
      await store.pushDevices.damp(d.id, 5000);
      await store.pushDevices.damp(d.id, 4000);
      assert.deepEqual(await store.pushDevices.byId(d.id).then((r) => [r?.failures, r?.dampedUntil]), [2, 5000]);
      await store.outbox.addMany([
        { userId: d.userId, channel: 'webpush', kind: 'note', payload: {}, createdAt: 10, deviceId: d.id },
        { userId: d.userId, channel: 'webpush', kind: 'dismiss', payload: {}, createdAt: 10, deviceId: d.id, nextAttemptAt: 9000 },
      ]);
      assert.equal(await store.outbox.deferForDevice(d.userId, d.id, 5000), 1, 'only the message due before the damping ends moves');
      assert.deepEqual((await store.outbox.list({ userId: d.userId })).map((m) => m.nextAttemptAt).sort(), [5000, 9000]);
      await store.pushDevices.touch(d.id, 6000);
      assert.deepEqual(await store.pushDevices.byId(d.id).then((r) => [r?.failures, r?.dampedUntil, r?.lastUsedAt]), [0, null, 6000]);
    });

    it('keeps an owner\'s newest undelivered notes within the budget and drops the older ones', async () => {
      const user = uniq('u_');
      await store.outbox.addMany(Array.from({ length: 7 }, (_, i) => ({ userId: user, channel: 'webpush', kind: 'note', payload: { i }, createdAt: 10 + i, deviceId: 'dev_x' })));
      await store.outbox.add({ userId: user, channel: 'webpush', kind: 'approval', payload: {}, createdAt: 5, deviceId: 'dev_x' });
      assert.equal(await store.outbox.dropOverBudget(user, 'note', 3, 100, 'over budget'), 4);
      const rows = await store.outbox.list({ userId: user });
      assert.deepEqual(rows.filter((m) => m.failedAt === null).map((m) => m.payload.i ?? m.kind), ['approval', 6, 5, 4]);
      assert.ok(rows.filter((m) => m.failedAt !== null).every((m) => m.lastError === 'over budget' && m.kind === 'note'));
      assert.equal(await store.outbox.dropOverBudget(user, 'note', 3, 100, 'over budget'), 0);
    });

    it('cancels a removed device\'s messages and purges ended ones', async () => {
      const user = uniq('u_');
      const dev = uniq('dev_');
      await store.outbox.addMany([{ userId: user, channel: 'webpush', kind: 'note', payload: {}, createdAt: 10, deviceId: dev, nextAttemptAt: 10_000_000 }]);
      assert.equal(await store.outbox.cancelForDevice(dev, 20, 'device removed'), 1);
      assert.equal((await store.outbox.list({ userId: user }))[0]?.lastError, 'device removed');
      const purged = await store.outbox.purgeEnded(21);
      assert.ok(purged >= 1);
      assert.deepEqual(await store.outbox.list({ userId: user }), []);
    });
  });
}
