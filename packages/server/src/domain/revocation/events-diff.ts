import type { RevocationEntries, RevokedAgent, RevokedGrant } from '@mandate/protocol';
import type { SnapshotContent } from './snapshot.ts';

const grantKey = (g: RevokedGrant): string => `${g.agent} ${g.site}`;
const sameAgent = (a: RevokedAgent, b: RevokedAgent): boolean => a.flag === b.flag && a.rev_seq === b.rev_seq;

/**
 * What turns the list `from` into the list `to` (decisions §30), as applyRevocationDelta applies it:
 * `added` holds the entries new or changed (same agent id, or agent and site, with another flag or
 * rev_seq), `removed` those no longer listed (revoked grants and removals aged out of the window,
 * unblocks, courtesy entries the bound drops), as they were listed.
 */
export function entriesDiff(from: SnapshotContent, to: SnapshotContent): { added: RevocationEntries; removed: RevocationEntries } {
  const oldAgents = new Map(from.revoked_agents.map((a) => [a.id, a]));
  const newAgents = new Map(to.revoked_agents.map((a) => [a.id, a]));
  const oldGrants = new Map(from.revoked_grants.map((g) => [grantKey(g), g]));
  const newGrants = new Map(to.revoked_grants.map((g) => [grantKey(g), g]));
  return {
    added: {
      revoked_agents: to.revoked_agents.filter((a) => {
        const was = oldAgents.get(a.id);
        return was === undefined || !sameAgent(was, a);
      }),
      revoked_grants: to.revoked_grants.filter((g) => oldGrants.get(grantKey(g))?.rev_seq !== g.rev_seq),
    },
    removed: {
      revoked_agents: from.revoked_agents.filter((a) => !newAgents.has(a.id)),
      revoked_grants: from.revoked_grants.filter((g) => !newGrants.has(grantKey(g))),
    },
  };
}
