import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { AgentRecord, GrantRecord, Store } from '../../src/store/ports/index.ts';
import { openSqliteStore } from '../../src/store/sqlite/open.ts';
import { startVerifyWorker, verifyWorker } from '../../src/store/sqlite/hot-path.ts';
import type { Worker } from 'node:worker_threads';
import SQLite from 'better-sqlite3';

// Cloud verify's statements run on connections of their own to the same file, its writes on a worker
// thread (store/sqlite/hot-path.ts, verify-worker.ts). These are the ways that could go wrong which
// the contract suite does not reach.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('SQLite hot path (second connection)', () => {
  let dir: string;
  let store: Store;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mandate-hot-'));
    store = await openSqliteStore(dir);
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('waits for an open write transaction without stopping the event loop, and is never part of it', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let consumed: boolean | undefined;
    // A transaction that writes, then waits (holding the write lock) and finally rolls back.
    const tx = store
      .transaction(async (repos) => {
        await repos.counters.next('hot-path-test');
        await held;
        throw new Error('roll back');
      })
      .catch((e: unknown) => e);
    await sleep(20);
    const consuming = store.singleUse.consume('dpop', 'jti-during-transaction', Date.now() + 60_000, Date.now()).then((v) => (consumed = v));
    // The event loop keeps running while the consumption waits for the lock.
    const ticks: number[] = [];
    for (let i = 0; i < 5; i++) {
      await sleep(10);
      ticks.push(i);
    }
    assert.equal(ticks.length, 5);
    assert.equal(consumed, undefined, 'the consumption waits for the write lock');
    release();
    assert.match(String(await tx), /roll back/);
    await consuming;
    assert.equal(consumed, true);
    // The rollback of the other transaction did not take the consumption with it.
    assert.equal(await store.singleUse.consume('dpop', 'jti-during-transaction', Date.now() + 60_000, Date.now()), false);
    assert.equal(await store.counters.current('hot-path-test'), 0);
  });

  it('reads only committed data: a revocation not yet committed (or rolled back) is not seen', async () => {
    const user = { id: 'u_hot', email: 'hot@example.com', displayName: 'Ann', passwordHash: 'h', phone: null, phoneVerified: false, createdAt: 1000 };
    await store.users.create(user);
    const agent: AgentRecord = {
      id: 'ag_hot', userId: user.id, name: 'Bot', kind: 'agent', clientId: null, publicJwk: { kty: 'EC', crv: 'P-256', x: 'x', y: 'y' }, jkt: 'j',
      status: 'active', flag: 'ok', flagRevSeq: null, createdAt: 5, removedAt: null, unblockedAt: null, unblockedRevSeq: null,
    };
    await store.agents.create(agent);
    const grant: GrantRecord = {
      id: 'gr_hot', userId: user.id, agentId: agent.id, site: 'shop.example', scopes: ['list'], userInfo: [], status: 'active',
      createdAt: 1, expiresAt: null, usesLeft: null, refreshHash: null, passesIssued: 0, revokedAt: null, revSeq: null, supersededAt: null, resource: null,
    };
    await store.grants.create(grant);
    const status = async () => (await store.agents.withGrant(agent.id, grant.id))?.grant?.status;

    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const tx = store
      .transaction(async (repos) => {
        await repos.grants.revoke(grant.id, 7, 3);
        await held;
        throw new Error('roll back');
      })
      .catch(() => undefined);
    await sleep(20);
    assert.equal(await status(), 'active', 'the open transaction is not seen');
    release();
    await tx;
    assert.equal(await status(), 'active', 'nor after its rollback');
    await store.grants.revoke(grant.id, 8, 4);
    assert.equal(await status(), 'revoked', 'a committed revocation is seen at once');
  });

  it('answers a consumption only once it is committed: another connection sees it at once', async () => {
    const key = 'jti-committed-before-answer';
    assert.equal(await store.singleUse.consume('dpop', key, Date.now() + 60_000, Date.now()), true);
    const other = new SQLite(join(dir, 'mandate.db'), { readonly: true });
    try {
      assert.equal(other.prepare<[string], { n: number }>('SELECT COUNT(*) AS n FROM single_use WHERE key = ?').get(key)?.n, 1);
    } finally {
      other.close();
    }
  });

  it('a worker that stops fails the batches it held, and the next batch runs on a new one', async () => {
    const started: Worker[] = [];
    let restarts = 0;
    const client = verifyWorker({ path: join(dir, 'mandate.db'), busyTimeoutMs: 5000 }, (input) => {
      const w = startVerifyWorker(input);
      started.push(w);
      return w;
    }, () => restarts++);
    try {
      const item = (key: string) => ({ namespace: 'dpop', key, expiresAt: Date.now() + 60_000 });
      // Stopped while it starts (loading takes far longer than this), with a batch sent: its caller
      // is refused (never told "first"), nothing hangs.
      const inFlight = client.send({ items: [item('w-1')], now: Date.now() });
      await started[0]?.terminate();
      await assert.rejects(inFlight, /worker thread stopped/);
      // The next batch starts a new worker; the refused one was never written.
      assert.deepEqual((await client.send({ items: [item('w-1'), item('w-2'), item('w-2')], now: Date.now() })).won, [true, true, false]);
      assert.equal(started.length, 2, 'a new worker took over');
      assert.equal(restarts, 1, 'the restart is reported (mandate_worker_restarts_total{worker="sqlite-verify"})');
    } finally {
      await client.close();
    }
    await assert.rejects(client.send({ items: [], now: Date.now() }), /closed/);
  });
});
