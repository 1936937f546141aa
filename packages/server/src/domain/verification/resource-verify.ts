import { type ResourcePassClaims, type ResourceTokenScheme, type StepupClaims, ProtocolError, verifyResourceRequest, verifyStepupToken } from '@mandate/protocol';
import type { AgentStanding } from '../../store/ports/index.ts';
import { seconds } from '../../clock.ts';
import { asFailure } from './answers.ts';
import type { VerifierDeps, VerifyAnswer } from './cloud-verify.ts';
import { checkPassRevocation } from './revocation-check.ts';
import { resourceStepupBinding } from './stepup-binding.ts';
import { consumeStepup } from './stepup-consume.ts';

export interface ResourceVerifyRequest {
  accessToken: string;
  /** The `DPoP` header, for a DPoP-bound pass. */
  dpop?: string | undefined;
  /** How the pass came; absent: `DPoP` when a proof is sent, else `Bearer`. */
  tokenType?: ResourceTokenScheme | undefined;
  method: string;
  url: string;
  /** The protected resource's URL: the pass's `aud` must be exactly this. */
  resource: string;
  stepupToken?: string | undefined;
  action?: string | undefined;
  detailsDigest?: string | undefined;
  ip?: string | null;
}

/**
 * Cloud verify of a call to a protected resource (decisions §28) with an app's resource pass: the
 * pass for exactly that resource, the scheme it came with and its DPoP proof when bound (the
 * protocol's verifyResourceRequest, the check the site SDK runs locally too), revocation read from the
 * shared store (the app agent removed or blocked, its grant revoked or replaced: at once, as for
 * agents' passes), then the proof's jti consumed; with a step-up token, that token checked before
 * anything is consumed and used up last. The answer adds `client_id`, `resource` and `scope`.
 */
export async function verifyResourceCall(d: VerifierDeps, req: ResourceVerifyRequest): Promise<VerifyAnswer> {
  const nowMs = d.clock.now();
  const now = seconds(nowMs);
  let agent: AgentStanding | undefined;
  let stepup: StepupClaims | undefined;
  try {
    const { claims } = await verifyResourceRequest({
      keys: d.keys.resolver,
      issuer: d.issuer,
      now,
      resource: req.resource,
      accessToken: req.accessToken,
      scheme: req.tokenType ?? (req.dpop !== undefined ? 'DPoP' : 'Bearer'),
      dpop: req.dpop,
      method: req.method,
      url: req.url,
      proofSignatureCheck: d.proofSignatures ?? 'inline',
      isRevoked: async (pass) => {
        const revocation = await checkPassRevocation(d.store, pass);
        if (revocation.verdict !== null) return revocation.verdict;
        // Nothing is spent for an unusable step-up token: checked before the proof's jti.
        if (req.stepupToken !== undefined) stepup = await checkStepup(d, req, pass, now);
        agent = revocation.agent;
        return null;
      },
      consumeJti: (jti, expiresAtSec) => d.store.singleUse.consume('dpop', jti, expiresAtSec * 1000, nowMs),
    });
    if (!agent) throw new ProtocolError('agent_revoked');
    if (stepup) await consumeStepup(d, stepup, nowMs, req.ip ?? null);
    return {
      valid: true,
      agent_id: agent.id,
      agent_name: agent.name,
      user_id: claims.user,
      site: hostOf(claims.aud),
      scopes: claims.scope,
      user_info: {},
      stepup: stepup !== undefined,
      client_id: claims.client_id,
      resource: claims.aud,
      scope: claims.scope.join(' '),
    };
  } catch (e) {
    return asFailure(e);
  }
}

/** A step-up the owner approved for this app, person and resource (a site step-up filed with its pass). */
async function checkStepup(d: VerifierDeps, req: ResourceVerifyRequest, pass: ResourcePassClaims, now: number): Promise<StepupClaims> {
  return verifyStepupToken(req.stepupToken, {
    keys: d.keys.resolver,
    issuer: d.issuer,
    now,
    agentId: pass.sub,
    jkt: resourceStepupBinding(pass),
    site: pass.aud,
    userId: pass.user,
    ...(req.action === undefined ? {} : { action: req.action }),
    ...(req.detailsDigest === undefined ? {} : { detailsDigest: req.detailsDigest }),
  });
}

/** The host of a resource URL: the site its grant is filed under. */
function hostOf(resource: string): string {
  try {
    return new URL(resource).host;
  } catch {
    return resource;
  }
}
