import { newId } from '../../src/domain/ids.ts';
import { RevocationSequence } from '../../src/domain/revocation/rev-seq.ts';
import type { Store } from '../../src/store/ports/index.ts';

/**
 * The finding of issue 14: one owner approves one agent for many made-up site ids, and revokes it.
 * `seedGrants` writes `count` active grants of `agentId` straight into the store in one transaction
 * (for speed); one site in a thousand has a name outside ASCII (2-, 3- and 4-byte UTF-8), so the
 * list's bytes are not all one byte per character. `revokeAllAt` then revokes them at `at` in one
 * revocation (one rev_seq, one statement: as revoking an agent's grants does) and answers its rev_seq.
 */
export function seedGrants(store: Store, o: { userId: string; agentId: string; count: number; at: number }): Promise<void> {
  return store.transaction(async (repos) => {
    for (let i = 0; i < o.count; i++) {
      await repos.grants.create({
        id: newId('gr'),
        userId: o.userId,
        agentId: o.agentId,
        site: i % 1000 === 7 ? `bücher-€-𝄞-${i}.example` : `made-up-${i}.example`,
        scopes: ['orders:read'],
        userInfo: [],
        status: 'active',
        createdAt: o.at,
        expiresAt: null,
        usesLeft: null,
        refreshHash: null,
        passesIssued: 0,
        revokedAt: null,
        revSeq: null,
        supersededAt: null, resource: null,
      });
    }
  });
}

export function revokeAllAt(store: Store, agentId: string, at: number): Promise<number> {
  return store.transaction(async (repos) => {
    const revSeq = await new RevocationSequence(repos.counters).advance();
    await repos.grants.revokeAllForAgent(agentId, at, revSeq);
    return revSeq;
  });
}

/** Both: `count` grants of `agentId` revoked at `at`; the rev_seq of the revocation. */
export async function seedRevokedGrants(store: Store, o: { userId: string; agentId: string; count: number; at: number }): Promise<number> {
  await seedGrants(store, o);
  return revokeAllAt(store, o.agentId, o.at);
}

/**
 * The attack of issue 22: an account lists its agents as blocked for good. `seedBlockedAgents`
 * writes `count` agents of `userId` straight into the store, blocked (flag `revoked`) at `at`, in one
 * transaction that advances rev_seq once (as the owner's blocks would have, one by one); answers
 * their ids, newest block first (agent i was blocked at `at - i` ms).
 */
export function seedBlockedAgents(store: Store, o: { userId: string; count: number; at: number; flag?: 'revoked' | 'suspicious' }): Promise<string[]> {
  return store.transaction(async (repos) => {
    const revSeq = await new RevocationSequence(repos.counters).advance();
    const ids: string[] = [];
    for (let i = 0; i < o.count; i++) {
      const id = newId('ag');
      await repos.agents.create({
        id, userId: o.userId, name: `blocked ${i}`, kind: 'agent', clientId: null, publicJwk: { kty: 'EC', crv: 'P-256', x: 'x', y: 'y' }, jkt: `jkt-${id}`,
        status: 'active', flag: o.flag ?? 'revoked', flagRevSeq: revSeq, createdAt: o.at - i, removedAt: null, unblockedAt: null, unblockedRevSeq: null,
      });
      await repos.agents.update(id, { flaggedAt: o.at - i });
      ids.push(id);
    }
    return ids;
  });
}
