import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FixedClock } from '../src/clock.ts';
import { Notifier } from '../src/domain/notifications/notifier.ts';
import { NOTE_BUDGET, NOTE_TTL_MS } from '../src/domain/notifications/note-limits.ts';
import { DAMP_FIRST_MS, dampMs } from '../src/delivery/damping.ts';
import { OWNER_SLOTS, OutboxWorker } from '../src/delivery/outbox-worker.ts';
import type { PushTransport, SendResult, WebPushTarget } from '../src/delivery/push-port.ts';
import { DEFAULT_PUSH_SERVICE_HOSTS, pushHostPolicy } from '../src/outbound/push-hosts.ts';
import { openSqliteStore } from '../src/store/sqlite/open.ts';
import type { Store } from '../src/store/ports/index.ts';
import { until } from './helpers/until.ts';

// The defences of issue 22 in the worker, on a real SQLite store with a fake push transport: sends
// end independently (a hung one holds one slot), an owner holds at most OWNER_SLOTS, a device that
// keeps failing is damped and recovers on a success, notes expire and keep a budget.

let seq = 0;
const endpoint = (name: string): string => `https://push.example/${name}-${seq++}`;

/** A transport whose answer per endpoint the test sets; `hold` endpoints wait until released. */
function scripted() {
  const inFlight = new Map<string, number>();
  let release: () => void = () => {};
  let released = new Promise<void>((r) => (release = r));
  const state = {
    sent: [] as string[],
    peak: new Map<string, number>(),
    answer: new Map<string, SendResult | 'hold'>(),
    release: () => {
      release();
      released = new Promise<void>((r) => (release = r));
    },
  };
  const transport: PushTransport<WebPushTarget> = {
    async send(target) {
      const owner = target.endpoint.split('/')[3]?.split('-')[0] ?? '';
      inFlight.set(owner, (inFlight.get(owner) ?? 0) + 1);
      state.peak.set(owner, Math.max(state.peak.get(owner) ?? 0, inFlight.get(owner) ?? 0));
      try {
        const a = state.answer.get(target.endpoint);
        if (a === 'hold') {
          await released;
          return { outcome: 'retry', detail: 'push to https://push.example not completed: timeout' };
        }
        if (a !== undefined) return a;
        state.sent.push(target.endpoint);
        return { outcome: 'sent' };
      } finally {
        inFlight.set(owner, (inFlight.get(owner) ?? 1) - 1);
      }
    },
  };
  return { state, transport };
}

describe('outbox worker: fairness, slots, damping, note limits', () => {
  let dir: string;
  let store: Store;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mandate-outbox-fair-'));
    store = await openSqliteStore(dir);
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const device = async (userId: string, name: string) =>
    store.pushDevices.upsert({ id: `dev_${name}${seq++}`, userId, kind: 'webpush', address: endpoint(name), p256dh: 'p', auth: 'a', name, createdAt: 0, lastUsedAt: null });

  it('a hung send holds one slot: the ordinary owner\'s push goes while the hostile owner\'s hang, and the hostile owner never has more than OWNER_SLOTS in flight', async () => {
    const clock = new FixedClock();
    const { state, transport } = scripted();
    const silent = await Promise.all(Array.from({ length: 20 }, (_, i) => device('u_hostile', `hostile${i}`)));
    for (const d of silent) state.answer.set(d.address, 'hold');
    const phone = await device('u_ordinary', 'ordinary');
    await store.outbox.addMany(silent.flatMap((d) => Array.from({ length: 3 }, () => ({ userId: 'u_hostile', channel: 'webpush', kind: 'note', payload: { type: 'note' }, createdAt: clock.now() - 1000, deviceId: d.id }))));
    const worker = new OutboxWorker({ store, clock, transports: { webpush: transport, fcm: null }, holder: 'node', pollMs: 1000, claimMs: 60_000 });
    const draining = worker.drain();
    await until('the hostile sends to hang', () => ([...state.peak.keys()].some((k) => k.startsWith('hostile')) ? true : undefined), { ms: 5000, everyMs: 5 });
    await store.outbox.add({ userId: 'u_ordinary', channel: 'webpush', kind: 'approval', payload: { type: 'approval' }, createdAt: clock.now(), deviceId: phone.id });
    worker.wake();
    await until('the ordinary approval to be sent while the hostile sends hang', () => (state.sent.includes(phone.address) ? true : undefined), { ms: 5000, everyMs: 5 });
    const hostilePeak = [...state.peak.entries()].filter(([k]) => k.startsWith('hostile')).reduce((n, [, v]) => n + v, 0);
    assert.ok(hostilePeak <= OWNER_SLOTS, `hostile sends in flight: ${hostilePeak}, at most ${OWNER_SLOTS}`);
    // The hung sends time out; the rest fail at once (retried later: not this drain's business).
    for (const d of silent) state.answer.set(d.address, { outcome: 'retry', detail: 'push to https://push.example not completed: timeout' });
    state.release();
    await draining;
  });

  it('damps a device after repeated failures, defers its messages and new ones, and a success ends the damping', async () => {
    const clock = new FixedClock();
    const { state, transport } = scripted();
    const d = await device('u_damp', 'damp');
    state.answer.set(d.address, { outcome: 'retry', detail: 'push to https://push.example not completed: timeout' });
    await store.outbox.addMany(Array.from({ length: 4 }, () => ({ userId: 'u_damp', channel: 'webpush', kind: 'agent_added', payload: { type: 'agent_added' }, createdAt: clock.now(), deviceId: d.id })));
    const worker = new OutboxWorker({ store, clock, transports: { webpush: transport, fcm: null }, holder: 'node', pollMs: 1000, claimMs: 60_000 });
    await worker.drain();
    const damped = await store.pushDevices.byId(d.id);
    assert.equal(damped?.failures, 4);
    assert.equal(damped?.dampedUntil, clock.now() + dampMs(4));
    assert.ok(dampMs(4) === 2 * DAMP_FIRST_MS);
    const waiting = await store.outbox.list({ userId: 'u_damp' });
    assert.ok(waiting.every((m) => m.nextAttemptAt >= clock.now() + dampMs(3)), 'every message waits for the damping');
    // A note queued meanwhile waits too: not tried before the damping ends.
    const notifier = new Notifier(store, clock);
    await notifier.agentNote('u_damp', 'Bot', { title: 'hi', text: 'there' });
    const [queued] = await store.outbox.list({ userId: 'u_damp', kind: 'note' });
    assert.equal(queued?.nextAttemptAt, damped?.dampedUntil);
    assert.equal(await worker.drain(), 0, 'nothing of the damped device is claimed before its time');
    // After the damping, the device answers again: delivered, failures back to 0, not damped.
    clock.advance(dampMs(4) + 1);
    state.answer.delete(d.address);
    await worker.drain();
    const recovered = await store.pushDevices.byId(d.id);
    assert.deepEqual([recovered?.failures, recovered?.dampedUntil, recovered !== undefined], [0, null, true], 'recovered, and never removed');
    assert.equal(state.sent.filter((e) => e === d.address).length >= 1, true);
  });

  it('notes expire after an hour and keep at most NOTE_BUDGET undelivered pushes per owner (the oldest dropped, the inbox keeps all)', async () => {
    const clock = new FixedClock();
    await device('u_notes', 'notes');
    const notifier = new Notifier(store, clock);
    let droppedCounted = 0;
    notifier.onNotesDropped((n) => (droppedCounted += n));
    for (let i = 0; i < NOTE_BUDGET + 5; i++) await notifier.agentNote('u_notes', 'Bot', { title: `n${i}`, text: 'x' });
    assert.equal(droppedCounted, 5, 'the metrics are told of each dropped push');
    const rows = await store.outbox.list({ userId: 'u_notes', limit: 1000 });
    assert.equal(rows.length, NOTE_BUDGET + 5);
    const pending = rows.filter((m) => m.failedAt === null);
    assert.equal(pending.length, NOTE_BUDGET);
    assert.ok(pending.every((m) => m.expiresAt === clock.now() + NOTE_TTL_MS));
    assert.ok(rows.filter((m) => m.failedAt !== null).every((m) => /over the owner's budget/.test(m.lastError ?? '')));
    assert.equal(await store.notifications.unreadCount('u_notes', 0), NOTE_BUDGET + 5, 'every note is in the inbox');
    // An hour later the rest are worthless: given up without a send.
    clock.advance(NOTE_TTL_MS);
    const { state, transport } = scripted();
    await new OutboxWorker({ store, clock, transports: { webpush: transport, fcm: null }, holder: 'node', pollMs: 1000, claimMs: 60_000 }).drain();
    assert.equal(state.sent.length, 0);
    assert.equal((await store.outbox.list({ userId: 'u_notes', limit: 1000 })).filter((m) => m.failedAt === null).length, 0);
  });

  it('security notices are not agents\' notes: no expiry, no budget', async () => {
    const clock = new FixedClock();
    await device('u_sec', 'sec');
    await new Notifier(store, clock).security('u_sec', 'New passkey', 'A passkey was added');
    const [row] = await store.outbox.list({ userId: 'u_sec' });
    assert.deepEqual([row?.kind, row?.expiresAt, (row?.payload as { type?: string }).type], ['security', null, 'note']);
  });

  it('push hosts: the known push services, subdomains by pattern, loopback only with OUTBOUND_ALLOW_LOOPBACK, any with null', () => {
    const strict = pushHostPolicy(DEFAULT_PUSH_SERVICE_HOSTS, false);
    for (const ok of ['https://fcm.googleapis.com/fcm/send/abc', 'https://updates.push.services.mozilla.com/wpush/v2/x', 'https://db5p.notify.windows.com/w/?token=x', 'https://web.push.apple.com/QO', 'https://api.push.apple.com/3/device/x']) {
      assert.equal(strict.problem(ok), null, ok);
    }
    for (const bad of ['https://push.apple.com.attacker.example/x', 'https://notify.windows.com/x', 'https://example.com/push', 'http://127.0.0.1:9/push/x']) {
      assert.match(strict.problem(bad) ?? '', /is not a known web push service; this service accepts fcm\.googleapis\.com/, bad);
    }
    assert.equal(pushHostPolicy(DEFAULT_PUSH_SERVICE_HOSTS, true).problem('http://127.0.0.1:9/push/x'), null);
    assert.equal(pushHostPolicy(null, false).problem('https://example.com/push'), null);
  });
});
