import { setTimeout as sleep } from 'node:timers/promises';
import { badRequest, conflict, forbidden, notFound } from '../errors.ts';
import { looksLikeId } from '../ids.ts';
import { boundDetailsActivity, boundDetailsOf } from '../receipts/bound-details.ts';
import type { AuthzRequestRecord } from '../../store/ports/index.ts';
import { type PassBearer, assertPassStanding, bearerFiled, isResourcePass, passBearer } from '../verification/pass-bearer.ts';
import { resourceStepupBinding } from '../verification/stepup-binding.ts';
import type { CreatedRequest } from './access-requests.ts';
import type { ApprovalDeps } from './deps.ts';
import { type PollView, collectStepup, requestView } from './polling.ts';
import { fileRequest } from './quota-filing.ts';
import { REQUEST_LIFETIME_SEC, STEPUP_REQUEST_LIMIT, checkAction, newPendingRequest } from './request-rules.ts';

export interface SiteStepupInput {
  /** The pass the agent presented to the site; it authenticates the site (decisions §28). */
  accessToken: string;
  action: string;
  /** `{summary, digest}` the approval is bound to (decisions §29), as the site sent it; checked here. */
  details?: unknown;
  ip?: string | null;
}

/** The longest a site's poll waits for the owner's answer, in seconds (decisions §28: `wait=0..25`). */
export const SITE_POLL_MAX_WAIT_SEC = 25;
/**
 * How often a waiting poll reads the request. No node tells another of an answer, so each waiting
 * poll reads the shared store (one indexed row, no connection held in between) this often: an
 * answer given on any node ends the wait within this delay.
 */
export const SITE_POLL_INTERVAL_MS = 250;

const NOT_FOUND = 'no site step-up with this txn_id for this pass: unknown, or filed for another agent, access or site';

/**
 * POST /api/v1/stepup/site: a site whose client holds no agent key (an MCP client, a browser-less
 * tool) asks the pass's owner to approve one action. The live pass authenticates the site; the
 * request's site is the pass's `aud`, and it counts against the same per-agent step-up limit and
 * open-requests quota as the agent's own step-ups. Its only effect is a card to the owner saying
 * that the site asks.
 */
export async function requestSiteStepup(d: ApprovalDeps, input: SiteStepupInput): Promise<CreatedRequest> {
  const { pass, agent } = await passBearer(d, input.accessToken);
  const action = checkAction(input.action);
  const boundDetails = boundDetailsOf(input.details);
  await d.limiter.check(`stepup-request:${agent.id}`, STEPUP_REQUEST_LIMIT.limit, STEPUP_REQUEST_LIMIT.windowSec);

  const now = d.clock.now();
  const grant = await d.store.grants.byId(pass.grant);
  // The pass is live, so its grant is active; past the grant's own expiry no approval is worth asking for.
  if (!grant || (grant.expiresAt !== null && grant.expiresAt <= now)) throw forbidden('the access this pass was issued for has ended');
  const request = { ...newPendingRequest(agent, pass.aud, now, { kind: 'stepup', scopes: [], userInfo: [], action, grantId: grant.id }), filedBy: 'site' as const, ...(boundDetails && { boundDetails }) };
  await d.store.transaction(async (repos) => {
    if (!(await fileRequest(repos, request, now))) throw conflict('the step-up request could not be stored; retry');
    await d.notifier.approvalRequested(agent.userId, { txnId: request.id, kind: 'stepup', filedBy: 'site', agentName: agent.name, site: pass.aud, action, expiresAt: request.expiresAt, ...(boundDetails && { details: boundDetails }) }, repos);
    await d.activity.record({ userId: agent.userId, action: 'stepup.requested', agentId: agent.id, site: pass.aud, detail: { txn_id: request.id, action, filed_by: 'site', ...boundDetailsActivity(boundDetails) }, ip: input.ip ?? null }, repos.activity);
  });
  d.notifier.wake();
  return { txnId: request.id, expiresIn: REQUEST_LIFETIME_SEC };
}

export interface SitePollInput {
  txnId: string;
  /** The `Authorization: Bearer` pass. */
  accessToken: string | undefined;
  /** The `wait` query parameter as sent: whole seconds, 0 to 25; absent: 0. */
  wait: string | undefined;
  ip?: string | null;
  /** Aborted when the site hangs up: the wait ends early. */
  signal?: AbortSignal;
}

/**
 * GET /api/v1/stepup/site/{txn_id}: the site's long poll. Waits up to `wait` seconds while the
 * request is pending and answers as soon as the owner has answered (or the request expired). The
 * step-up token of an approval is collected once: of any number of concurrent polls exactly one gets
 * it (polling.ts collectStepup); the rest read `consumed`.
 *
 * Who may poll: any live pass of the same agent, grant and site as the pass that filed it (a pass
 * the agent refreshed meanwhile too). Any other pass, or a request the agent filed, reads 404.
 */
export async function pollSiteStepup(d: ApprovalDeps, input: SitePollInput): Promise<PollView> {
  if (!looksLikeId('t', input.txnId)) throw badRequest('txn_id must be a request id (t_…)');
  const waitMs = waitOf(input.wait) * 1000;
  const bearer = await passBearer(d, input.accessToken);
  const started = performance.now();
  for (;;) {
    const request = await d.store.authzRequests.byId(input.txnId);
    if (request === undefined || !bearerFiled(bearer, request)) throw notFound(NOT_FOUND);
    const left = waitMs - (performance.now() - started);
    const waiting = request.status === 'pending' && request.expiresAt > d.clock.now();
    if (!waiting || left <= 0) {
      return requestView(d, request, (approved, agentName, now) => collectForSite(d, bearer, approved, agentName, now, input.ip ?? null));
    }
    try {
      await sleep(Math.min(SITE_POLL_INTERVAL_MS, left), undefined, input.signal ? { signal: input.signal } : {});
    } catch {
      // The site hung up: nobody would read the answer, so nothing is collected (the token stays
      // for its next poll). The error is never sent.
      throw notFound(NOT_FOUND);
    }
  }
}

/**
 * Revocation is read again at collection: the pass was checked when the wait began. An app's token
 * (filed with its resource pass: the app holds no agent key) is bound as stepup-binding.ts says.
 */
async function collectForSite(d: ApprovalDeps, bearer: PassBearer, request: AuthzRequestRecord, agentName: string, now: number, ip: string | null): Promise<PollView> {
  await assertPassStanding(d.store, bearer.pass);
  const binding = isResourcePass(bearer.pass) ? resourceStepupBinding(bearer.pass) : undefined;
  return collectStepup(d, request, agentName, bearer.agent, now, ip, binding);
}

/** `wait`: whole seconds 0..25 written as digits; 400 otherwise. */
function waitOf(raw: string | undefined): number {
  if (raw === undefined) return 0;
  if (!/^[0-9]{1,2}$/.test(raw) || Number(raw) > SITE_POLL_MAX_WAIT_SEC) throw badRequest(`wait must be whole seconds from 0 to ${SITE_POLL_MAX_WAIT_SEC}`);
  return Number(raw);
}
