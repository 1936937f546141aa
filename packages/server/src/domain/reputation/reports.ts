import { type KeyResolver, LIMITS, PASS_TYP, ProtocolError, verifyServiceToken } from '@mandate/protocol';
import type { ReportKind, Store } from '../../store/ports/index.ts';
import type { Activity } from '../activity/activity.ts';
import { type Clock, seconds } from '../../clock.ts';
import { badRequest } from '../errors.ts';
import { looksLikeId } from '../ids.ts';
import type { RateLimiter } from '../rate-limit.ts';

export interface ReportInput {
  accessToken: string;
  kind: ReportKind;
  detail: string;
  ip: string | null;
}

export interface AcceptedReport {
  agentId: string;
  site: string;
  kind: ReportKind;
  /** False when a `good` report did not replace the site's negative one. */
  counted: boolean;
}

/**
 * A `good` report never replaces one of these. The reporter is known only by the pass's `aud`, and
 * an agent holds passes for that site too: without this rule it could wash a site's negative
 * report away with its own `good`. Another negative report still replaces a negative one.
 */
export const NEGATIVE_KINDS: readonly ReportKind[] = ['spam', 'abuse', 'fraud', 'policy', 'scraping'];

/** Reports per reporting site per minute. */
export const REPORTS_PER_MINUTE = 30;
/** Passes are minted by our own nodes; this much clock skew between them is tolerated. */
const FUTURE_IAT_TOLERANCE_SEC = 60;

const invalidToken = (why: string) => badRequest(`invalid access_token: ${why}`);

/**
 * Site reports about agents (`POST /api/v1/reports`, decisions §9). The evidence is a pass the
 * agent presented at the site: signed by us, minted at most 7 days ago (it may have expired); the
 * reporting site is its `aud`, the agent its `sub`. A site's latest report replaces its previous one,
 * except that `good` does not replace a negative one (NEGATIVE_KINDS).
 */
export class Reports {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly keys: KeyResolver,
    private readonly issuer: string,
    private readonly limiter: RateLimiter,
    private readonly activity: Activity,
  ) {}

  async submit(input: ReportInput): Promise<AcceptedReport> {
    const { agentId, site } = await this.evidence(input.accessToken);
    await this.limiter.check(`reports:${site}`, REPORTS_PER_MINUTE, 60);
    const agent = await this.store.agents.byId(agentId);
    if (!agent) throw invalidToken('the pass names an agent that no longer exists');
    const report = { agentId, site, kind: input.kind, detail: input.detail, createdAt: this.clock.now() };
    const counted = await this.store.reports.upsert(report, input.kind === 'good' ? NEGATIVE_KINDS : []);
    await this.activity.record({
      userId: agent.userId,
      action: 'report.received',
      agentId,
      site,
      detail: { kind: input.kind, detail: input.detail, counted },
      ip: input.ip,
    });
    return { agentId, site, kind: input.kind, counted };
  }

  /**
   * Checks the pass: structure, typ `at+jwt`, ES256, a published kid, signature, iss, type `access`
   * (so a step-up token or revocation JWT never counts), then its age by iat. exp is deliberately
   * not checked: a site reports misbehaviour after the fact.
   */
  private async evidence(token: string): Promise<{ agentId: string; site: string }> {
    const now = seconds(this.clock.now());
    let payload: Record<string, unknown>;
    try {
      payload = await verifyServiceToken(token, { keys: this.keys, issuer: this.issuer, now, typ: PASS_TYP, type: 'access', checkExp: false });
    } catch (e) {
      if (e instanceof ProtocolError) throw invalidToken(e.message);
      throw e;
    }
    const { sub, aud, iat } = payload;
    if (typeof sub !== 'string' || !looksLikeId('ag', sub)) throw invalidToken('the pass has no valid sub');
    if (typeof aud !== 'string' || aud.length === 0 || aud.length > 255) throw invalidToken('the pass has no valid aud');
    if (typeof iat !== 'number' || !Number.isInteger(iat)) throw invalidToken('the pass has no valid iat');
    if (iat > now + FUTURE_IAT_TOLERANCE_SEC) throw invalidToken('the pass was minted in the future');
    if (now - iat > LIMITS.reportPassMaxAgeSec) {
      throw invalidToken('the pass was minted more than 7 days ago; report with a newer pass the agent presented');
    }
    return { agentId: sub, site: aud };
  }
}
