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

/**
 * A built snapshot is reused while the shared rev_seq counter has not moved, for at most this long:
 * every change to the lists advances the counter (decisions §5), so the bound only matters for a
 * change made without it, which then shows within this time.
 */
const REUSE_CONTENT_MS = 5_000;

/**
 * A signed snapshot may be handed out again for this long while its content is unchanged. Local
 * verifiers judge freshness by the signed `iat` (their `max_stale` may be a few seconds), so a
 * reused signature must be young: one second still absorbs a burst of polls with one signing.
 */
const REUSE_SIGNATURE_MS = 1_000;

/**
 * The signed revocation snapshot of decisions §5: agents with a non-ok flag or a tombstone, and
 * revoked grants, each with the rev_seq at which it took effect.
 */
export class RevocationSnapshots {
  private cached: { etag: string; signature: string; signedAt: number } | undefined;
  private built: { counter: number; builtAt: number; validUntil: number; snapshot: Snapshot } | undefined;
  private serialized: { etag: string; signature: string; json: string } | undefined;

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
    // Building reads and hashes every entry (10 000 entries: tens of ms). Sites poll every minute,
    // mostly with If-None-Match, and the lists change only with the counter (or when a lifted entry's
    // linger ends, which validUntil covers): one read of the shared counter tells whether the snapshot
    // built last is still exact, on this node as on any other.
    const b = this.built;
    if (b && b.counter === counter && now >= b.builtAt && now < b.validUntil) return b.snapshot;
    const [agents, grants] = await Promise.all([this.repos.agents.listRevoked(now), this.repos.grants.listRevoked(now)]);
    const revokedAgents = agents.map((a) => agentEntry(a, counter, now));
    const revokedGrants = grantEntries(grants, counter);
    let revSeq = counter;
    for (const e of [...revokedAgents, ...revokedGrants]) revSeq = Math.max(revSeq, e.rev_seq);
    const content: SnapshotContent = { rev_seq: revSeq, revoked_agents: revokedAgents, revoked_grants: revokedGrants };
    const snapshot = { ...content, etag: etagOf(content) };
    this.built = { counter, builtAt: now, validUntil: Math.min(now + REUSE_CONTENT_MS, lingerEnd(agents, grants, now)), snapshot };
    return snapshot;
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

  /**
   * The answer body of `GET /api/v1/revocation` as JSON text, written once per snapshot and signature
   * (with 10 000 entries, serialising it for every request cost more than everything else).
   */
  body(snapshot: Snapshot, signature: string): string {
    const b = this.serialized;
    if (b && b.etag === snapshot.etag && b.signature === signature) return b.json;
    const json = JSON.stringify({ signature, rev_seq: snapshot.rev_seq, revoked_agents: snapshot.revoked_agents, revoked_grants: snapshot.revoked_grants });
    this.serialized = { etag: snapshot.etag, signature, json };
    return json;
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

/** The first moment a listed entry stops lingering (and so leaves the list without rev_seq moving). */
function lingerEnd(agents: AgentRecord[], grants: GrantRecord[], now: number): number {
  let end = Infinity;
  for (const a of agents) if (a.unblockedAt !== null && a.unblockedAt + LINGER_MS > now) end = Math.min(end, a.unblockedAt + LINGER_MS);
  for (const g of grants) if (g.supersededAt !== null && g.supersededAt + LINGER_MS > now) end = Math.min(end, g.supersededAt + LINGER_MS);
  return end;
}

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
