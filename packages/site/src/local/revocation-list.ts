import { type KeyResolver, ProtocolError, type RevocationClaims, RevocationIndex, verifyRevocationSnapshot } from '@mandate/protocol';
import type { VerifierConfig } from '../config.ts';
import { ServiceUnavailableError, callService, isRecord } from '../service-client.ts';

/** A snapshot whose signature or content did not verify: ignored, the held one keeps ageing. */
export class RevocationRejectedError extends Error {
  constructor(readonly code: string, why: string) {
    super(`GET /api/v1/revocation: snapshot ignored (${code}: ${why})`);
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

export type RevocationStats = { accepted: number; notModified: number; ignoredOlder: number; rejected: number };

const nowSec = (config: Pick<VerifierConfig, 'now'>): number => Math.floor(config.now() / 1000);

/**
 * The signed revocation snapshot (`GET /api/v1/revocation`), held in memory. Only its signed
 * content is used. Its age is judged by the signed `iat` (Mandate's clock), so neither a replayed
 * old answer nor a string of `304`s can keep it fresh: once it is older than half of `max_stale` we
 * stop sending `If-None-Match` and get a freshly signed one. A snapshot signed "in the future" (the
 * service's clock ahead of ours, within the accepted skew) ages from the moment we accepted it, so a
 * clock difference never stretches `max_stale`. A snapshot with a lower `rev_seq` than
 * the one held (or the same `rev_seq`, signed earlier) is ignored: revocations never go backwards.
 */
export class RevocationList {
  private held: RevocationClaims | undefined;
  /** Our clock (s) when `held` was accepted. */
  private heldSince = 0;
  /** The held snapshot indexed once when accepted: verdicts in constant time, not a walk per request. */
  private index: RevocationIndex | undefined;
  private etag: string | undefined;
  readonly stats: RevocationStats = { accepted: 0, notModified: 0, ignoredOlder: 0, rejected: 0 };

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

  /** Seconds since the held snapshot was signed (or accepted, if that is earlier); Infinity when none is held. */
  ageSec(): number {
    return this.held === undefined ? Infinity : nowSec(this.config) - Math.min(this.held.iat, this.heldSince);
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
    const signature = isRecord(res.body) ? res.body['signature'] : undefined;
    let claims: RevocationClaims;
    try {
      claims = await verifyRevocationSnapshot(signature, { keys: this.keys, issuer: this.config.issuer, now: nowSec(this.config) });
    } catch (e) {
      if (!(e instanceof ProtocolError)) throw e;
      this.stats.rejected++;
      throw new RevocationRejectedError(e.code, e.message);
    }
    const held = this.held;
    if (held !== undefined && (claims.rev_seq < held.rev_seq || (claims.rev_seq === held.rev_seq && claims.iat < held.iat))) {
      this.stats.ignoredOlder++;
      return 'ignored_older';
    }
    this.held = claims;
    this.heldSince = nowSec(this.config);
    this.index = new RevocationIndex(claims);
    this.etag = res.headers.get('etag') ?? undefined;
    this.stats.accepted++;
    return 'accepted';
  }
}
