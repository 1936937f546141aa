import { REVOCATION_TYP, type RevokedAgent, type RevokedGrant } from '@mandate/protocol';
import type { Repos } from '../../store/ports/index.ts';
import { type Clock, seconds } from '../../clock.ts';
import { COURTESY_CAP } from './revocation-bound.ts';
import { readEntries } from './revocation-entries.ts';
import { type SnapshotText, bodyOf, payloadHead, snapshotText } from './revocation-text.ts';
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
  /** The lists as bytes, written once for this content (revocation-text.ts). */
  text: SnapshotText;
}

/** Signs a JWS whose payload is given already base64url-encoded, in pieces; the JWS in pieces (crypto/signing-keys.ts). */
export interface SnapshotSigner {
  signEncoded(typ: string, encodedPayload: readonly Uint8Array[]): Promise<Buffer[]>;
}

/**
 * A built snapshot is reused while the shared rev_seq counter has not moved, for at most this long:
 * every change to the lists advances the counter (decisions §5), so the bound only matters for a
 * change made without it, which then shows within this time. Entries that age out (decisions §25)
 * end the reuse exactly when they do (RevocationEntries.changesAt).
 */
const REUSE_CONTENT_MS = 5_000;

/**
 * A signed snapshot may be handed out again for this long while its content is unchanged. Local
 * verifiers judge freshness by the signed `iat` (their `max_stale` may be a few seconds), so a
 * reused signature must be young: one second still absorbs a burst of polls with one signing.
 */
const REUSE_SIGNATURE_MS = 1_000;

interface Built {
  counter: number;
  builtAt: number;
  validUntil: number;
  snapshot: Snapshot;
}

/**
 * The signed revocation snapshot of decisions §5 and §25: flagged agents, and the revocations,
 * removals and unblocks of the last 600 s + 120 s (revocation-window.ts), each with the rev_seq at
 * which it took effect. Flags older than that window refuse no live pass; at most COURTESY_CAP of
 * them are listed, shared fairly between owners (revocation-bound.ts).
 *
 * Building and signing are spread over many turns of the event loop (paged reads, serialisation,
 * hashing and encoding in steps: revocation-entries.ts, revocation-text.ts, crypto/revocation-jws.ts),
 * so a long list never stalls the requests served meanwhile (30 000 entries held the event loop for
 * 0.5 to 1 s in one piece before); requests that arrive while a build or a signing is under way wait
 * for it instead of starting their own.
 */
export class RevocationSnapshots {
  private built: Built | undefined;
  private building: { counter: number; startedAt: number; done: Promise<Built> } | undefined;
  private signed: { etag: string; jws: Buffer[]; signedAt: number } | undefined;
  private signing: { etag: string; signedAt: number; done: Promise<Buffer[]> } | undefined;
  private serialized: { etag: string; jws: Buffer[]; body: Buffer[] } | undefined;

  constructor(
    private readonly repos: Pick<Repos, 'agents' | 'grants' | 'counters'>,
    private readonly signer: SnapshotSigner,
    private readonly clock: Clock,
    private readonly issuer: string,
    /** The bound on courtesy entries across accounts (revocation-bound.ts); tests scale it down. */
    private readonly courtesyCap = COURTESY_CAP,
  ) {}

  /**
   * The counter is read before the lists, and is the snapshot's rev_seq. Every writer advances the
   * counter and changes its row in one transaction, and writers commit in counter order (the counter
   * row is locked until commit), so every entry up to the value read is committed before the first
   * page is read, and read (readEntries). An entry committed meanwhile may be read too, with a higher
   * number: listing it refuses a little more, a little sooner. rev_seq is not raised to it, since
   * the grants are read in pages, not in one statement: another entry committed meanwhile may have
   * been missed, and rev_seq must not claim it.
   */
  async current(): Promise<Snapshot> {
    const now = this.clock.now();
    const counter = await new RevocationSequence(this.repos.counters).current();
    // Sites poll every minute, mostly with If-None-Match, and the lists change only with the
    // counter or when an entry ages out (validUntil covers that): one read of the shared counter
    // tells whether the snapshot built last is still exact, on this node as on any other.
    const b = this.built;
    if (b && b.counter === counter && now >= b.builtAt && now < b.validUntil) return b.snapshot;
    const w = this.building;
    if (w && w.counter === counter && now >= w.startedAt) {
      const shared = await w.done;
      if (now < shared.validUntil) return shared.snapshot;
    }
    const done = this.build(counter, now);
    this.building = { counter, startedAt: now, done };
    try {
      const fresh = await done;
      // Builds may finish out of order: keep the one that started last.
      if (!this.built || fresh.builtAt >= this.built.builtAt) this.built = fresh;
      return fresh.snapshot;
    } finally {
      if (this.building?.done === done) this.building = undefined;
    }
  }

  /** Entries of the snapshot built last, without building one (for the metrics); undefined before the first. */
  lastBuiltEntries(): number | undefined {
    const b = this.built;
    return b && b.snapshot.revoked_agents.length + b.snapshot.revoked_grants.length;
  }

  private async build(counter: number, now: number): Promise<Built> {
    const entries = await readEntries(this.repos, now, counter, this.courtesyCap);
    const text = await snapshotText(counter, entries.revokedAgents, entries.revokedGrants);
    const snapshot: Snapshot = { rev_seq: counter, revoked_agents: entries.revokedAgents, revoked_grants: entries.revokedGrants, etag: text.etag, text };
    return { counter, builtAt: now, validUntil: Math.min(now + REUSE_CONTENT_MS, entries.changesAt), snapshot };
  }

  /**
   * The `signature` JWT for a snapshot (claims `type`, `iss`, `iat`, `rev_seq`, `revoked_agents`,
   * `revoked_grants`); reused for a short while so polling sites cost no signing. Only the head of
   * the payload (with `iat`) is encoded here; the lists were encoded with the snapshot.
   */
  async sign(snapshot: Snapshot): Promise<Buffer[]> {
    const now = this.clock.now();
    const reusable = (c: { etag: string; signedAt: number }) => c.etag === snapshot.etag && now >= c.signedAt && now - c.signedAt < REUSE_SIGNATURE_MS;
    const c = this.signed;
    if (c && reusable(c)) return c.jws;
    // A burst of polls for the same list shares one signing (it hashes MBs, in steps).
    const w = this.signing;
    if (w && reusable(w)) return w.done;
    const done = this.signer.signEncoded(REVOCATION_TYP, [payloadHead(this.issuer, seconds(now), snapshot.rev_seq), ...snapshot.text.payloadTail]);
    this.signing = { etag: snapshot.etag, signedAt: now, done };
    try {
      const jws = await done;
      this.signed = { etag: snapshot.etag, jws, signedAt: now };
      return jws;
    } finally {
      if (this.signing?.done === done) this.signing = undefined;
    }
  }

  /**
   * The answer body of `GET /api/v1/revocation` in pieces (sent one after the other: the MBs of a long
   * list are not copied into one buffer), assembled once per snapshot and signature.
   */
  body(snapshot: Snapshot, jws: Buffer[]): Buffer[] {
    const b = this.serialized;
    if (b && b.etag === snapshot.etag && b.jws === jws) return b.body;
    const body = bodyOf(jws, snapshot.rev_seq, snapshot.text);
    this.serialized = { etag: snapshot.etag, jws, body };
    return body;
  }
}

/** RFC 9110 §13.1.2: `*` or a list of (weak or strong) tags, compared weakly. */
export function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  const opaque = (t: string) => t.trim().replace(/^W\//, '');
  return ifNoneMatch.split(',').some((t) => opaque(t) === opaque(etag));
}
