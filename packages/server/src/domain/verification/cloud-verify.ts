import { type PassClaims, ProtocolError, type StepupClaims, VerifiedPassCache, verifyPassAndProof, verifyStepupToken } from '@mandate/protocol';
import type { SigningKeys } from '../../crypto/signing-keys.ts';
import type { AgentStanding, Store } from '../../store/ports.ts';
import type { Activity } from '../activity/activity.ts';
import { type Clock, seconds } from '../clock.ts';
import { type VerifyFailure, asFailure } from './answers.ts';
import { checkPassRevocation } from './revocation-check.ts';
import { consumeStepup } from './stepup-consume.ts';

export interface VerifyRequest {
  accessToken: string;
  dpop: string;
  method: string;
  url: string;
  stepupToken?: string | undefined;
  site?: string | undefined;
  action?: string | undefined;
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
}

/**
 * `POST /api/v1/verify` (cloud mode). Steps, cheapest and non-consuming first:
 * 1. pass + DPoP proof (the protocol's one check), revocation read from the store;
 * 2. the step-up token, if sent, checked against the pass (same agent, key, person, site; action);
 * 3. the DPoP jti consumed; 4. the step-up jti consumed.
 * Steps 1-2 run before anything is consumed, so a request refused there leaves its proof and its
 * step-up token usable; a replayed proof (3) never burns a step-up token.
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
        // Runs after the pass and proof verified, before the jti is consumed.
        isRevoked: async (passClaims) => {
          const revocation = await checkPassRevocation(this.d.store, passClaims);
          if (revocation.verdict !== null) return revocation.verdict;
          agent = revocation.agent;
          if (req.stepupToken !== undefined) stepup = await this.checkStepup(req.stepupToken, passClaims, req.action, now);
          return null;
        },
        consumeJti: (jti, expiresAtSec) => this.d.store.singleUse.consume('dpop', jti, expiresAtSec * 1000, nowMs),
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
  private async checkStepup(token: string, pass: PassClaims, action: string | undefined, now: number): Promise<StepupClaims> {
    const claims = await verifyStepupToken(token, {
      keys: this.d.keys.resolver,
      issuer: this.d.issuer,
      now,
      agentId: pass.sub,
      jkt: pass.cnf.dpop,
      site: pass.aud,
      ...(action === undefined ? {} : { action }),
    });
    if (claims.user !== pass.user) throw new ProtocolError('stepup_invalid', 'the step-up token was approved by another person');
    return claims;
  }
}
