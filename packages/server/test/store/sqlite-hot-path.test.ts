import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { AgentRecord, GrantRecord, Store } from '../../src/store/ports.ts';
import { openSqliteStore } from '../../src/store/sqlite/open.ts';

// Cloud verify's statements run on a second connection to the same file (store/sqlite/hot-path.ts).
// These are the ways that could go wrong which the contract suite does not reach.

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
      id: 'ag_hot', userId: user.id, name: 'Bot', publicJwk: { kty: 'EC', crv: 'P-256', x: 'x', y: 'y' }, jkt: 'j',
      status: 'active', flag: 'ok', flagRevSeq: null, createdAt: 5, removedAt: null, unblockedAt: null, unblockedRevSeq: null,
    };
    await store.agents.create(agent);
    const grant: GrantRecord = {
      id: 'gr_hot', userId: user.id, agentId: agent.id, site: 'shop.example', scopes: ['list'], userInfo: [], status: 'active',
      createdAt: 1, expiresAt: null, usesLeft: null, refreshHash: null, passesIssued: 0, revokedAt: null, revSeq: null, supersededAt: null,
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
});
