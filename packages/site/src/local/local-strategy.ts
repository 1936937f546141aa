import { type PassClaims, ProtocolError, type RevocationIndex, type StepupClaims, VerifiedPassCache, verifyPassAndProof, verifyStepupToken } from '@mandate/protocol';
import type { VerifierConfig } from '../config.ts';
import type { PreparedRequest, Strategy } from '../strategy.ts';
import { ServiceUnavailableError, toError } from '../service-client.ts';
import type { Verified } from '../types.ts';
import { JwksCache } from './jwks.ts';
import type { ReplayCache } from './replay-cache.ts';
import { verifiedProofIat } from './replay-proof.ts';
import { RevocationList, RevocationStaleError } from './revocation-list.ts';
import { RevocationStream } from './revocation-stream.ts';
import { confirmStepup } from './stepup-confirm.ts';

/** The key set is fetched again in the background at least this often, so retired keys leave. */
const KEYS_MAX_AGE_MS = 10 * 60 * 1000;
/** After a failed poll, try again sooner than rev_ttl. */
const RETRY_AFTER_FAILURE_SEC = 10;
/** The refusal of a proof older than its agent's replay horizon (replay-memory.ts): a new proof passes. */
const BEFORE_HORIZON =
  'this agent sent more DPoP proofs than its share of the replay cache, so proofs signed this long ago can no longer be told from replays; sign a new proof';

/**
 * Local mode: passes and proofs are checked here by the protocol's one check
 * (`verifyPassAndProof`) against the published keys, the revocation list (followed on Mandate's event
 * stream, polled while that is down or with `revocation: 'poll'`) and a DPoP jti
 * replay cache; only step-ups go to Mandate. The order matches cloud verify exactly, so both
 * modes give the same answer: pass and proof, revocation, step-up token checks (only when the
 * pass has the route's scope), jti consumed, step-up used up at Mandate.
 */
export class LocalStrategy implements Strategy {
  readonly keys: JwksCache;
  readonly revocation: RevocationList;
  /** Undefined with `revocation: 'poll'`. */
  readonly stream: RevocationStream | undefined;
  private readonly replay: ReplayCache;
  /** A pass's signature is checked once per token; the proof, expiry, revocation and jti on every request. */
  private readonly passes = new VerifiedPassCache();
  private firstLoad: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly config: VerifierConfig,
    replayCache: ReplayCache,
  ) {
    this.keys = new JwksCache(config);
    this.revocation = new RevocationList(config, this.keys.resolve);
    this.stream = config.revocation === 'stream' ? new RevocationStream(config, this.revocation, () => this.refreshRevocation()) : undefined;
    this.replay = replayCache;
  }

  /**
   * Loads keys and revocation list once, then follows the event stream (resuming from the list just
   * loaded) and starts polling; rejects when that first load fails (stream and polling go on).
   */
  start(): Promise<void> {
    if (this.firstLoad === undefined) {
      this.firstLoad = this.poll();
      this.firstLoad.then(
        () => this.schedule(this.config.revTtlSec),
        () => this.schedule(Math.min(this.config.revTtlSec, RETRY_AFTER_FAILURE_SEC)),
      );
      this.firstLoad.catch(() => undefined).finally(() => {
        if (!this.closed) this.stream?.start();
      });
    }
    return this.firstLoad;
  }

  /** How revocations reach us now: the event stream (in step with the held list), or polling. */
  get revocationVia(): 'stream' | 'polling' {
    return this.stream?.inStep === true ? 'stream' : 'polling';
  }

  /** Polls now: keys when missing or old, then the revocation list. */
  async refresh(): Promise<void> {
    await this.poll(true);
  }

  close(): void {
    this.closed = true;
    this.stream?.close();
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** `force`: fetch the revocation list even while the stream is in step (an explicit refresh). */
  private async poll(force = false): Promise<void> {
    if (!this.keys.loaded) await this.keys.refresh();
    else if (this.keys.ageMs() >= KEYS_MAX_AGE_MS) {
      // The keys held still verify; a failed background refresh must not hold up the revocation list.
      await this.keys.refresh().catch((e: unknown) => this.config.onError(toError(e)));
    }
    // A stream in step brings every change within a second: a poll would only cost Mandate a request.
    // Unless the stream has said nothing for revTtlSec (its keep-alives are sparser than this verifier
    // polls, e.g. a max_stale shorter than the service's keep-alive interval): then poll, so the list
    // held stays as fresh as polling alone would keep it.
    const streamKeepsItFresh = this.stream?.inStep === true && this.revocation.ageSec() < this.config.revTtlSec;
    if (force || !streamKeepsItFresh) await this.refreshRevocation();
  }

  private async refreshRevocation(): Promise<void> {
    const outcome = await this.revocation.refresh();
    if (outcome === 'ignored_older') {
      this.config.onError(new Error('GET /api/v1/revocation: a snapshot older than the one held was ignored'));
    }
  }

  private schedule(afterSec: number): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      this.poll().then(
        () => this.schedule(this.config.revTtlSec),
        (e: unknown) => {
          this.config.onError(toError(e));
          this.schedule(Math.min(this.config.revTtlSec, RETRY_AFTER_FAILURE_SEC));
        },
      );
    }, afterSec * 1000);
    this.timer.unref(); // polling never keeps the process alive
  }

  /**
   * The revocation index when everything a verdict needs is already held (the steady state), without
   * an await: a promise per request would cost more than the checks themselves.
   */
  private readyNow(): RevocationIndex | undefined {
    return this.firstLoad !== undefined && this.keys.loaded ? this.revocation.freshIndex() : undefined;
  }

  /** Everything a verdict needs, or the reason there can be none (503). */
  private async ready(): Promise<RevocationIndex> {
    if (this.firstLoad === undefined) {
      await this.start().catch((e: unknown) => this.config.onError(toError(e)));
    }
    if (!this.keys.loaded) {
      if (this.keys.mayRefresh()) await this.keys.refresh();
      if (!this.keys.loaded) throw new ServiceUnavailableError("Mandate's keys are not loaded yet");
    }
    const snapshot = this.revocation.freshIndex();
    if (snapshot === undefined) throw new RevocationStaleError(this.revocation.ageSec(), this.config.maxStaleSec);
    return snapshot;
  }

  /** The revocation index once keys and a fresh list are held, or the reason there is none (thrown): for mcpAuth's resource passes. */
  revocationIndex(): Promise<RevocationIndex> {
    const now = this.readyNow();
    return now === undefined ? this.ready() : Promise.resolve(now);
  }

  async verify(p: PreparedRequest): Promise<Verified> {
    const snapshot = this.readyNow() ?? (await this.ready());
    const now = Math.floor(this.config.now() / 1000);
    const { keys, config } = this;
    let stepup: StepupClaims | undefined;
    let agentId: string | undefined;

    const { claims } = await verifyPassAndProof({
      accessToken: p.accessToken,
      dpop: p.dpop,
      method: p.method,
      url: p.url,
      site: config.site,
      now,
      keys: keys.resolve,
      issuer: config.issuer,
      passCache: this.passes,
      // Runs after pass and proof verified and before the jti is consumed, as in cloud verify.
      isRevoked: async (pass: PassClaims) => {
        agentId = pass.sub;
        const verdict = snapshot.verdict(pass);
        if (verdict !== null) return verdict;
        const scopeOk = p.scope === undefined || pass.scope.includes(p.scope);
        if (scopeOk && p.action !== undefined && p.stepupToken !== undefined) {
          stepup = await verifyStepupToken(p.stepupToken, {
            keys: keys.resolve,
            issuer: config.issuer,
            now,
            agentId: pass.sub,
            jkt: pass.cnf.dpop,
            site: pass.aud,
            action: p.action,
            userId: pass.user,
            ...(p.detailsDigest === undefined ? {} : { detailsDigest: p.detailsDigest }),
          });
        }
        return null;
      },
      consumeJti: async (jti, expiresAtSec) => {
        // isRevoked ran just before with this pass; keyed by agent, one agent's flood stays its own.
        if (agentId === undefined) throw new Error('the replay cache was reached before the pass was checked');
        const fresh = await this.replay.consume(jti, expiresAtSec, now, { agentId, iat: verifiedProofIat(p.dpop) });
        if (fresh === 'before_horizon') throw new ProtocolError('dpop_replay', BEFORE_HORIZON);
        return fresh;
      },
    });

    if (stepup !== undefined && p.action !== undefined && p.stepupToken !== undefined) {
      await confirmStepup(config, { stepupToken: p.stepupToken, action: p.action, agentId: claims.sub, userId: claims.user, detailsDigest: p.detailsDigest });
    }
    return {
      ok: true,
      agentId: claims.sub,
      userId: claims.user,
      site: claims.aud,
      scopes: claims.scope,
      userInfo: claims.user_info ?? {},
      stepup: stepup !== undefined,
    };
  }
}
