import { newId } from '../../src/domain/ids.ts';
import { RevocationSequence } from '../../src/domain/revocation/rev-seq.ts';
import type { Store } from '../../src/store/ports.ts';

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
        supersededAt: null,
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
