/**
 * The challenge (decisions §23): a protected route this instance serves itself, so that anyone can
 * try an agent end to end. It is verified as any site verifies in cloud mode, by the service's own
 * CloudVerifier: pass and DPoP proof for the instance's site id, the scope `challenge`, and for the
 * action `claim` a one-time step-up (site rules: 401 with the verdict's code, 403 insufficient_scope,
 * 403 stepup_required). Nothing is stored beyond what every verification records.
 */
import { decodeJwt } from 'jose';
import type { CloudVerifier, VerifySuccess } from '../verification/cloud-verify.ts';

export const CHALLENGE_PATH = '/challenge';
export const CLAIM_PATH = '/challenge/claim';

/** What the agent sent: the raw headers that carry the pass, the proof and the step-up. */
export interface ChallengeRequest {
  authorization: string | undefined;
  dpop: string | undefined;
  stepup: string | undefined;
  ip: string;
}

export type ChallengeAnswer =
  | { status: 200; body: Record<string, unknown> }
  | { status: 401 | 403; body: { error: string; error_description: string; detail: string; action?: string } };

/** The site rules' `{error, error_description}` (what agents read), with the service's `detail` beside it. */
const refuse = (status: 401 | 403, error: string, description: string, action?: string): ChallengeAnswer => ({
  status,
  body: { error, error_description: description, detail: description, ...(action === undefined ? {} : { action }) },
});

/** `Bearer <pass>` or `DPoP <pass>` (RFC 9449 names the scheme DPoP; agents send either). */
function passOf(authorization: string | undefined): string | undefined {
  const m = /^(?:Bearer|DPoP) +([A-Za-z0-9_.~+/=-]+)$/i.exec(authorization?.trim() ?? '');
  return m?.[1];
}

/**
 * Whether the pass, read without checking it, lacks the scope: such a request is refused before
 * verification, so that a step-up token sent with it is not used up for nothing (site rule 4). A pass
 * that does carry the scope is then verified in full; this shortcut can only refuse.
 */
function lacksScope(pass: string, scope: string): boolean {
  try {
    const claims = decodeJwt(pass);
    return !Array.isArray(claims['scope']) || !claims['scope'].includes(scope);
  } catch {
    return false; // not a JWT: the verifier says why, with its code
  }
}

export interface ChallengeDeps {
  verifier: CloudVerifier;
  /** BASE_URL without a trailing slash: the URL agents sign is this plus the path. */
  baseUrl: string;
  /** The instance's site id (the host of BASE_URL). */
  site: string;
  scope: string;
  action: string;
}

export class Challenge {
  constructor(private readonly d: ChallengeDeps) {}

  /** What the route's description and pages name. */
  get facts(): { siteId: string; scope: string; action: string } {
    return { siteId: this.d.site, scope: this.d.scope, action: this.d.action };
  }

  /** GET /challenge with a pass. */
  async read(req: ChallengeRequest): Promise<ChallengeAnswer> {
    const verdict = await this.verify(req, 'GET', CHALLENGE_PATH, false);
    if ('status' in verdict) return verdict;
    return {
      status: 200,
      body: {
        ok: true,
        site: verdict.site,
        agent_id: verdict.agent_id,
        agent_name: verdict.agent_name,
        scopes: verdict.scopes,
        message: `Read with a pass for ${verdict.site}. Next: POST ${this.d.baseUrl}${CLAIM_PATH}, which needs a one-time step-up for the action "${this.d.action}".`,
      },
    };
  }

  /** POST /challenge/claim: the sensitive action, which needs a step-up for `claim`. */
  async claim(req: ChallengeRequest): Promise<ChallengeAnswer> {
    const verdict = await this.verify(req, 'POST', CLAIM_PATH, true);
    if ('status' in verdict) return verdict;
    if (!verdict.stepup) return refuse(403, 'stepup_required', 'this action needs a step-up approval by the owner, sent in X-Service-Stepup', this.d.action);
    return {
      status: 200,
      body: {
        claimed: true,
        site: verdict.site,
        agent_id: verdict.agent_id,
        agent_name: verdict.agent_name,
        message: `Claimed: the owner approved "${this.d.action}" with a passkey, and the step-up token is now used up.`,
      },
    };
  }

  private async verify(req: ChallengeRequest, method: string, path: string, stepupAllowed: boolean): Promise<VerifySuccess | ChallengeAnswer> {
    const pass = passOf(req.authorization);
    if (pass === undefined || req.dpop === undefined || req.dpop === '') {
      return refuse(401, 'invalid_request', 'no Mandate pass in this request: send Authorization: Bearer <pass> and DPoP: <proof>');
    }
    if (lacksScope(pass, this.d.scope)) return refuse(403, 'insufficient_scope', `this route needs the scope ${this.d.scope}`);
    const stepup = stepupAllowed && req.stepup !== undefined && req.stepup !== '' ? req.stepup : undefined;
    const answer = await this.d.verifier.verify({
      accessToken: pass,
      dpop: req.dpop,
      method,
      url: `${this.d.baseUrl}${path}`,
      site: this.d.site,
      ...(stepup === undefined ? {} : { stepupToken: stepup, action: this.d.action }),
      ip: req.ip,
    });
    if (!answer.valid) return refuse(401, answer.error, answer.error_description);
    // Checked again on the verified pass: the shortcut above read it unverified.
    if (!answer.scopes.includes(this.d.scope)) return refuse(403, 'insufficient_scope', `this route needs the scope ${this.d.scope}`);
    return answer;
  }
}
