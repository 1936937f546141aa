import {
  type KeyResolver,
  ProtocolError,
  type RevocationClaims,
  RevocationIndex,
  applyRevocationDelta,
  verifyRevocationDelta,
  verifyRevocationSnapshot,
} from '@mandate/protocol';
import type { VerifierConfig } from '../config.ts';
import { ServiceUnavailableError, callService, isRecord } from '../service-client.ts';

/** A snapshot whose signature or content did not verify: ignored, the held one keeps ageing. */
export class RevocationRejectedError extends Error {
  constructor(readonly code: string, why: string, what = 'GET /api/v1/revocation: snapshot') {
    super(`${what} ignored (${code}: ${why})`);
    this.name = 'RevocationRejectedError';
  }
}

/** Refused with 503 `revocation_stale`: we hold no revocation list signed within `max_stale`. */
export class RevocationStaleError extends Error {
  constructor(ageSec: number, maxStaleSec: number) {
    super(
      ageSec === Infinity
        ? 'no verified revocation list yet: requests are refused until one is fetched from Mandate'
        : `the revocation list was signed ${ageSec} s ago, more than max_stale (${maxStaleSec} s): requests are refused until a fresh one is fetched`,
    );
    this.name = 'RevocationStaleError';
  }
}

export type RevocationStats = { accepted: number; notModified: number; ignoredOlder: number; rejected: number; deltas: number };

/** What a delta did: applied, already held (older or equal `rev_seq`), or a gap (a snapshot is needed). */
export type DeltaOutcome = 'applied' | 'already_held' | 'gap';

const nowSec = (config: Pick<VerifierConfig, 'now'>): number => Math.floor(config.now() / 1000);

/**
 * The signed revocation snapshot (`GET /api/v1/revocation`), held in memory. Only its signed
 * content is used. Its age is judged by the signed `iat` (Mandate's clock), so neither a replayed
 * old answer nor a string of `304`s can keep it fresh: once it is older than half of `max_stale` we
 * stop sending `If-None-Match` and get a freshly signed one. A snapshot signed "in the future" (the
 * service's clock ahead of ours, within the accepted skew) ages from the moment we accepted it, so a
 * clock difference never stretches `max_stale`. A snapshot with a lower `rev_seq` than
 * the one held (or the same `rev_seq`, signed earlier) is ignored: revocations never go backwards.
 * Deltas from the event stream are applied in order on top of it (decisions §30), and a keep-alive of
 * a stream that is in step with the held list counts as freshness too (`markLive`).
 */
export class RevocationList {
  private held: RevocationClaims | undefined;
  /** Our clock (s) when `held` was accepted. */
  private heldSince = 0;
  /** The held snapshot indexed once when accepted: verdicts in constant time, not a walk per request. */
  private index: RevocationIndex | undefined;
  /** Our clock (s) at the last keep-alive of an event stream in step with `held`: the list was current then. */
  private liveAt = -Infinity;
  private etag: string | undefined;
  readonly stats: RevocationStats = { accepted: 0, notModified: 0, ignoredOlder: 0, rejected: 0, deltas: 0 };

  constructor(
    private readonly config: VerifierConfig,
    private readonly keys: KeyResolver,
  ) {}

  /** The index of the held snapshot when it was signed at most `maxStaleSec` ago, else undefined (refuse). */
  freshIndex(): RevocationIndex | undefined {
    return this.fresh() === undefined ? undefined : this.index;
  }

  /** The held snapshot when it was signed at most `maxStaleSec` ago, else undefined (refuse). */
  fresh(): RevocationClaims | undefined {
    const age = this.ageSec();
    return this.held !== undefined && age <= this.config.maxStaleSec ? this.held : undefined;
  }

  /**
   * Seconds since the held list was signed (or accepted, if that is earlier), or since the event stream
   * last said it is current (a keep-alive), whichever is later; Infinity when none is held.
   */
  ageSec(): number {
    if (this.held === undefined) return Infinity;
    return nowSec(this.config) - Math.max(Math.min(this.held.iat, this.heldSince), this.liveAt);
  }

  /** The event stream, in step with the held list, sent a keep-alive: nothing changed up to now. */
  markLive(): void {
    if (this.held !== undefined) this.liveAt = nowSec(this.config);
  }

  get revSeq(): number | undefined {
    return this.held?.rev_seq;
  }

  /** Fetches and verifies the current snapshot. Throws ServiceUnavailableError or RevocationRejectedError; the held one stays. */
  async refresh(): Promise<'accepted' | 'not_modified' | 'ignored_older'> {
    const conditional = this.held !== undefined && this.etag !== undefined && this.ageSec() < this.config.maxStaleSec / 2;
    const res = await callService(this.config, '/api/v1/revocation', {
      method: 'GET',
      ...(conditional && this.etag !== undefined ? { headers: { 'if-none-match': this.etag } } : {}),
    });
    if (res.status === 304 && conditional) {
      this.stats.notModified++;
      return 'not_modified';
    }
    if (res.status !== 200) throw new ServiceUnavailableError(`GET /api/v1/revocation answered ${res.status}`);
    return this.accept(res.body, res.headers.get('etag') ?? undefined, 'GET /api/v1/revocation: snapshot');
  }

  /**
   * Verifies a snapshot body (`{signature, ...}`, as `GET /api/v1/revocation` answers and the event
   * stream's `snapshot` event carries) and holds it unless it is older than the held list.
   * Throws RevocationRejectedError when it does not verify; the held one stays.
   */
  async accept(body: unknown, etag: string | undefined, what: string): Promise<'accepted' | 'ignored_older'> {
    const signature = isRecord(body) ? body['signature'] : undefined;
    let claims: RevocationClaims;
    try {
      claims = await verifyRevocationSnapshot(signature, { keys: this.keys, issuer: this.config.issuer, now: nowSec(this.config) });
    } catch (e) {
      if (!(e instanceof ProtocolError)) throw e;
      this.stats.rejected++;
      throw new RevocationRejectedError(e.code, e.message, what);
    }
    const held = this.held;
    if (held !== undefined && (claims.rev_seq < held.rev_seq || (claims.rev_seq === held.rev_seq && claims.iat < held.iat))) {
      this.stats.ignoredOlder++;
      return 'ignored_older';
    }
    this.hold(claims);
    this.etag = etag;
    this.stats.accepted++;
    return 'accepted';
  }

  /**
   * Verifies a delta JWT from the event stream and applies it to the held list. Throws
   * RevocationRejectedError when it does not verify (nothing applied); answers `gap` when it does not
   * follow the held list (or none is held): the caller fetches a snapshot.
   */
  async applyDelta(jwt: string): Promise<DeltaOutcome> {
    let delta;
    try {
      delta = await verifyRevocationDelta(jwt, { keys: this.keys, issuer: this.config.issuer, now: nowSec(this.config) });
    } catch (e) {
      if (!(e instanceof ProtocolError)) throw e;
      this.stats.rejected++;
      throw new RevocationRejectedError(e.code, e.message, 'revocation stream: delta');
    }
    const held = this.held;
    if (held === undefined) return 'gap';
    if (delta.rev_seq <= held.rev_seq) return 'already_held';
    let next: RevocationClaims;
    try {
      next = applyRevocationDelta(held, delta);
    } catch (e) {
      if (e instanceof ProtocolError) return 'gap';
      throw e;
    }
    this.hold(next);
    // The ETag named a snapshot we have moved past: a 304 against it would say nothing about this list.
    this.etag = undefined;
    this.stats.deltas++;
    return 'applied';
  }

  private hold(claims: RevocationClaims): void {
    this.held = claims;
    this.heldSince = nowSec(this.config);
    this.index = new RevocationIndex(claims);
  }
}
