import { createHash } from 'node:crypto';
import { LIMITS, REVOCATION_TYP, type RevocationClaims, type RevokedAgent, type RevokedGrant } from '@mandate/protocol';
import type { AgentRecord, GrantRecord, Repos } from '../../store/ports.ts';
import { isAgentBlocked } from '../agents/blocked.ts';
import { type Clock, seconds } from '../clock.ts';
import { RevocationSequence } from './rev-seq.ts';

/** The content of a snapshot: what is signed, and what the ETag is computed from. */
export interface SnapshotContent {
  rev_seq: number;
  revoked_agents: RevokedAgent[];
  revoked_grants: RevokedGrant[];
}

export interface Snapshot extends SnapshotContent {
  /** Strong ETag over rev_seq and the lists (not over the signature, whose iat changes). */
  etag: string;
}

export interface SnapshotSigner {
  sign(payload: RevocationClaims, typ: string): Promise<string>;
}

/**
 * A lifted revocation (a revoked grant superseded by a re-approval, an unblocked agent) stays listed
 * this long: every pass minted before it has expired by then. Its leaving the list does not advance
 * rev_seq: a verifier still holding the entry would only refuse passes that have expired anyway.
 */
const LINGER_MS = LIMITS.passLifetimeSec * 1000;

/** A signed snapshot may be handed out again for this long while its content is unchanged. */
const REUSE_SIGNATURE_MS = 30_000;

/**
 * The signed revocation snapshot of decisions §5: agents with a non-ok flag or a tombstone, and
 * revoked grants, each with the rev_seq at which it took effect.
 */
export class RevocationSnapshots {
  private cached: { etag: string; signature: string; signedAt: number } | undefined;

  constructor(
    private readonly repos: Pick<Repos, 'agents' | 'grants' | 'counters'>,
    private readonly signer: SnapshotSigner,
    private readonly clock: Clock,
    private readonly issuer: string,
  ) {}

  /**
   * The counter is read before the lists. Every writer advances the counter and changes its row in
   * one transaction, and writers commit in counter order (the counter row is locked until commit),
   * so the lists hold at least every entry up to the value read; an entry committed in between may
   * carry a higher number, which is why rev_seq is the larger of the two.
   */
  async current(): Promise<Snapshot> {
    const now = this.clock.now();
    const counter = await new RevocationSequence(this.repos.counters).current();
    const [agents, grants] = await Promise.all([this.repos.agents.listRevoked(now), this.repos.grants.listRevoked(now)]);
    const revokedAgents = agents.map((a) => agentEntry(a, counter, now));
    const revokedGrants = grantEntries(grants, counter);
    let revSeq = counter;
    for (const e of [...revokedAgents, ...revokedGrants]) revSeq = Math.max(revSeq, e.rev_seq);
    const content: SnapshotContent = { rev_seq: revSeq, revoked_agents: revokedAgents, revoked_grants: revokedGrants };
    return { ...content, etag: etagOf(content) };
  }

  /** The `signature` JWT for a snapshot; reused for a short while so polling sites cost no signing. */
  async sign(snapshot: Snapshot): Promise<string> {
    const now = this.clock.now();
    const c = this.cached;
    if (c && c.etag === snapshot.etag && now >= c.signedAt && now - c.signedAt < REUSE_SIGNATURE_MS) return c.signature;
    const claims: RevocationClaims = {
      type: 'revocation',
      iss: this.issuer,
      iat: seconds(now),
      rev_seq: snapshot.rev_seq,
      revoked_agents: snapshot.revoked_agents,
      revoked_grants: snapshot.revoked_grants,
    };
    const signature = await this.signer.sign(claims, REVOCATION_TYP);
    this.cached = { etag: snapshot.etag, signature, signedAt: now };
    return signature;
  }
}

/**
 * A removed agent reads `revoked` (its tombstone). A missing flagRevSeq should not happen; the
 * current counter then stands in, which refuses every pass minted so far (the safe side).
 * For one pass lifetime after its block was lifted, an agent reads `revoked` at the block's
 * rev_seq (also when it is now `suspicious`, which verifiers ignore): passes minted before the block
 * stay refused, passes minted after the unblock carry a higher rev_seq and pass.
 */
function agentEntry(a: AgentRecord, counter: number, now: number): RevokedAgent {
  if (isAgentBlocked(a)) return { id: a.id, flag: 'revoked', rev_seq: a.flagRevSeq ?? counter };
  if (a.unblockedAt !== null && now - a.unblockedAt < LINGER_MS) return { id: a.id, flag: 'revoked', rev_seq: a.unblockedRevSeq ?? counter };
  return { id: a.id, flag: a.flag, rev_seq: a.flagRevSeq ?? counter };
}

/** One entry per agent and site; if several revoked grants remain, the latest revocation counts. */
function grantEntries(grants: GrantRecord[], counter: number): RevokedGrant[] {
  const byKey = new Map<string, RevokedGrant>();
  for (const g of grants) {
    const entry = { agent: g.agentId, site: g.site, rev_seq: g.revSeq ?? counter };
    const key = JSON.stringify([g.agentId, g.site]);
    const prev = byKey.get(key);
    if (!prev || entry.rev_seq > prev.rev_seq) byKey.set(key, entry);
  }
  return [...byKey.values()].sort((a, b) => a.rev_seq - b.rev_seq || cmp(a.agent, b.agent) || cmp(a.site, b.site));
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function etagOf(content: SnapshotContent): string {
  return `"${createHash('sha256').update(JSON.stringify(content)).digest('base64url')}"`;
}

/** RFC 9110 §13.1.2: `*` or a list of (weak or strong) tags, compared weakly. */
export function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  const opaque = (t: string) => t.trim().replace(/^W\//, '');
  return ifNoneMatch.split(',').some((t) => opaque(t) === opaque(etag));
}
