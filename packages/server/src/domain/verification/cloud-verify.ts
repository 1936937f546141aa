import { type ResourceTokenScheme, type SignatureChecker, type PassClaims, ProtocolError, type StepupClaims, VerifiedPassCache, verifyPassAndProof, verifyStepupToken } from '@mandate/protocol';
import type { SigningKeys } from '../../crypto/signing-keys.ts';
import type { AgentStanding, Store } from '../../store/ports/index.ts';
import type { Activity } from '../activity/activity.ts';
import { type Clock, seconds } from '../../clock.ts';
import { type VerifyFailure, asFailure, failure } from './answers.ts';
import { isResourceAudience } from '../grants/audience.ts';
import { verifyResourceCall } from './resource-verify.ts';
import { checkPassRevocation, revocationVerdict } from './revocation-check.ts';
import { consumeStepup } from './stepup-consume.ts';

export interface VerifyRequest {
  accessToken: string;
  /** Required for an agent's pass; for a resource pass only when it is DPoP-bound. */
  dpop?: string | undefined;
  /** With `resource`: the scheme the pass came with (resource-verify.ts). */
  tokenType?: ResourceTokenScheme | undefined;
  /** The protected resource a call was made to (decisions §28): then the pass must be an app's resource pass for it. */
  resource?: string | undefined;
  method: string;
  url: string;
  stepupToken?: string | undefined;
  site?: string | undefined;
  action?: string | undefined;
  /** With `stepupToken`: when given, the token must carry exactly this `details_digest` (decisions §29). */
  detailsDigest?: string | undefined;
  ip?: string | null;
}

export interface VerifySuccess {
  valid: true;
  agent_id: string;
  agent_name: string;
  user_id: string;
  site: string;
  scopes: string[];
  user_info: Record<string, string>;
  stepup: boolean;
  /** For a resource pass (resource-verify.ts): the OAuth client, the resource URL, and the scopes space-separated. */
  client_id?: string;
  resource?: string;
  scope?: string;
}

export type VerifyAnswer = VerifySuccess | VerifyFailure;

export interface VerifierDeps {
  store: Store;
  keys: SigningKeys;
  clock: Clock;
  activity: Activity;
  issuer: string;
  /** Passes whose signature already verified on this node; one per verifier when absent. */
  passCache?: VerifiedPassCache;
  /**
   * Where proof signatures are checked: the service's signature thread (crypto/signature-worker.ts);
   * inline on the event loop when absent.
   */
  proofSignatures?: SignatureChecker;
}

/**
 * `POST /api/v1/verify` (cloud mode). Steps, cheapest and non-consuming first:
 * 1. pass + DPoP proof (the protocol's one check), the proof's signature on the signature thread
 *    while steps 2-3 run (verifyDpopProofWhile);
 * 2. the step-up token, if sent, checked against the pass (same agent, key, person, site; action);
 * 3. revocation read and the DPoP jti consumed, in one store round trip (Store.verifyLookup);
 * 4. the step-up jti consumed.
 * Steps 2-3 start only once every other check of step 1 passed, and a proof whose signature then
 * fails gets its jti back; so a request refused in steps 1-2 leaves its proof and its step-up token
 * usable (for a refused step-up token, revocation is read alone: it answers first). A pass refused
 * as revoked in step 3 spends its proof, which is bound to that pass; a replayed proof (3) never
 * burns a step-up token.
 */
export class CloudVerifier {
  /**
   * A site presents the same pass with every request of an agent session: its signature is checked
   * once per token on this node, while the proof, revocation and jti steps run on every request
   * (VerifiedPassCache). Per-node memory is enough: it holds only what the signature proved, which
   * no revocation on another node can change; revocation is read from the shared store every time.
   */
  readonly passCache: VerifiedPassCache;

  constructor(private readonly d: VerifierDeps) {
    this.passCache = d.passCache ?? new VerifiedPassCache();
  }

  async verify(req: VerifyRequest): Promise<VerifyAnswer> {
    if (req.resource !== undefined) return verifyResourceCall(this.d, { ...req, resource: req.resource });
    // A resource URL is no site: a resource pass is verified only when the caller names its resource.
    if (req.site !== undefined && isResourceAudience(req.site)) return failure('wrong_site', 'site is a site id (a host); for a protected resource send its URL as resource');
    const nowMs = this.d.clock.now();
    const now = seconds(nowMs);
    let agent: AgentStanding | undefined;
    let stepup: StepupClaims | undefined;
    try {
      const { claims } = await verifyPassAndProof({
        accessToken: req.accessToken,
        dpop: req.dpop,
        method: req.method,
        url: req.url,
        ...(req.site === undefined ? {} : { site: req.site.toLowerCase() }),
        now,
        keys: this.d.keys.resolver,
        issuer: this.d.issuer,
        passCache: this.passCache,
        proofSignatureCheck: this.d.proofSignatures ?? 'inline',
        // Runs once the pass and every check of the proof but its signature passed, while the
        // signature is checked: revocation and the jti in one store round trip.
        checkAndConsume: async (passClaims, jti, expiresAtSec) => {
          if (req.stepupToken !== undefined) {
            try {
              stepup = await this.checkStepup(req.stepupToken, passClaims, req.action, req.detailsDigest, now);
            } catch (e) {
              // Nothing is spent for an unusable step-up token; revocation still answers first.
              const revocation = await checkPassRevocation(this.d.store, passClaims);
              if (revocation.verdict !== null) return { verdict: revocation.verdict, fresh: false };
              throw e;
            }
          }
          const { standing, fresh } = await this.d.store.verifyLookup({
            agentId: passClaims.sub,
            grantId: passClaims.grant,
            jti: { namespace: 'dpop', key: jti, expiresAt: expiresAtSec * 1000 },
            now: nowMs,
          });
          const revocation = revocationVerdict(standing, passClaims);
          if (revocation.verdict !== null) return { verdict: revocation.verdict, fresh };
          agent = revocation.agent;
          return { verdict: null, fresh };
        },
        // The signature then failed: the proof uses up nothing (`POST /api/v1/verify`'s promise).
        releaseJti: (jti) => this.d.store.singleUse.release('dpop', jti),
      });
      if (!agent) throw new ProtocolError('agent_revoked');
      if (stepup) await consumeStepup(this.d, stepup, nowMs, req.ip ?? null);
      return {
        valid: true,
        agent_id: agent.id,
        agent_name: agent.name,
        user_id: claims.user,
        site: claims.aud,
        scopes: claims.scope,
        user_info: claims.user_info ?? {},
        stepup: stepup !== undefined,
      };
    } catch (e) {
      return asFailure(e);
    }
  }

  /** A step-up token is usable with this pass only if it was approved for the same agent, key, person and site. */
  private async checkStepup(token: string, pass: PassClaims, action: string | undefined, detailsDigest: string | undefined, now: number): Promise<StepupClaims> {
    const claims = await verifyStepupToken(token, {
      keys: this.d.keys.resolver,
      issuer: this.d.issuer,
      now,
      agentId: pass.sub,
      jkt: pass.cnf.dpop,
      site: pass.aud,
      ...(action === undefined ? {} : { action }),
      ...(detailsDigest === undefined ? {} : { detailsDigest }),
    });
    if (claims.user !== pass.user) throw new ProtocolError('stepup_invalid', 'the step-up token was approved by another person');
    return claims;
  }
}
