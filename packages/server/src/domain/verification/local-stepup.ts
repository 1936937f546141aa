import { ProtocolError, verifyStepupToken } from '@mandate/protocol';
import { isAgentBlocked } from '../agents/blocked.ts';
import { activeGrantFor, audienceOfSite } from '../grants/audience.ts';
import { seconds } from '../../clock.ts';
import { type VerifyFailure, asFailure } from './answers.ts';
import type { VerifierDeps } from './cloud-verify.ts';
import { consumeStepup } from './stepup-consume.ts';

export interface StepupVerifyRequest {
  stepupToken: string;
  site: string;
  action: string;
  /** The agent and owner of the pass the site verified; when given, the token must name them. */
  agentId?: string;
  userId?: string;
  /** When given, the token must carry exactly this `details_digest` (decisions §29). */
  detailsDigest?: string | undefined;
  ip?: string | null;
}

export interface StepupVerifySuccess {
  valid: true;
  agent_id: string;
  user_id: string;
  site: string;
  actions: string[];
}

/**
 * `POST /api/v1/stepup/verify`: local-mode sites verify passes themselves but confirm every
 * step-up here, because only the shared store can make a token single-use across all their nodes.
 * The token must name this site and action; its agent must still be allowed (agent_revoked) and
 * still hold access to the site (grant_revoked), both read at this moment (decisions §6).
 * A protected resource (decisions §28) sends its URL as `site`: the token of a site step-up filed with
 * an app's resource pass names it, and the app's grant for exactly that resource must stand.
 * A site that sends the agent and owner of the pass it verified gets `stepup_invalid` for a token of
 * anyone else, and the token is not used up: a step-up approved for one agent cannot be spent on
 * another agent's request.
 */
export class LocalStepupVerifier {
  constructor(private readonly d: VerifierDeps) {}

  async verify(req: StepupVerifyRequest): Promise<StepupVerifySuccess | VerifyFailure> {
    const nowMs = this.d.clock.now();
    try {
      const claims = await verifyStepupToken(req.stepupToken, {
        keys: this.d.keys.resolver,
        issuer: this.d.issuer,
        now: seconds(nowMs),
        site: audienceOfSite(req.site),
        action: req.action,
        ...(req.detailsDigest === undefined ? {} : { detailsDigest: req.detailsDigest }),
      });
      if (req.agentId !== undefined && req.agentId !== claims.sub) throw new ProtocolError('stepup_invalid', 'the step-up token was issued to another agent');
      if (req.userId !== undefined && req.userId !== claims.user) throw new ProtocolError('stepup_invalid', 'the step-up token was approved by another user');
      const [agent, grant] = await Promise.all([this.d.store.agents.byId(claims.sub), activeGrantFor(this.d.store.grants, claims.sub, claims.aud)]);
      if (!agent || isAgentBlocked(agent)) throw new ProtocolError('agent_revoked');
      if (!grant) throw new ProtocolError('grant_revoked');
      await consumeStepup(this.d, claims, nowMs, req.ip ?? null);
      return { valid: true, agent_id: claims.sub, user_id: claims.user, site: claims.aud, actions: claims.act };
    } catch (e) {
      return asFailure(e);
    }
  }
}
