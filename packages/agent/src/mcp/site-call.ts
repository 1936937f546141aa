import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { siteError } from '../site-call.ts';
import { stepupDetailsFor } from '../stepup-details.ts';
import { normalizeSiteId, siteIdOfUrl } from '../site-id.ts';
import type { McpDeps } from './context.ts';
import { siteScopeRefusal } from './missing-scope.ts';
import { PendingWork } from './pending.ts';
import { toolResult, ToolFailure } from './results.ts';
import { describeAnswer, readSiteAnswer } from './site-response.ts';
import type { ToolCallContext } from './tool.ts';
import { awaitWork } from './waiting.ts';

/** One request to a site, as `mandate_fetch` or a site operation tool asks for it. */
export type SiteCall = {
  url: string;
  method: string;
  headers: Headers;
  body?: string;
  /** The site id; default the URL's host. */
  site?: string;
  /** The step-up action to ask for when the site asks for one without naming it. */
  fallbackAction: string;
  /** The scopes the call needs, when known (a site operation's): named if the site refuses for want of one. */
  scopes?: readonly string[];
};

/**
 * `mandate_fetch`'s path: the call with the pass and a DPoP proof (renewed as needed, by the SDK).
 * On `403 stepup_required` the owner is asked to approve the action the site names (the site
 * verifies that exact text), else `fallbackAction`, bound to a JSON body by its digest, with the
 * summary the site suggests; once approved, the call is sent once more with the step-up token and
 * the same body. The token and the pass stay in this process; the model gets the site's answer.
 */
export async function callSite(d: McpDeps, call: SiteCall, ctx: ToolCallContext, waitSeconds: number): Promise<CallToolResult> {
  const site = siteOf(call);
  const first = await sendOnce(d, call, site);
  if (first.kind === 'answer') return first.result;
  const stepup = await fileStepup(d, call, site, first);
  const work = new PendingWork(d.pending, stepup.txnId, stepup.what, (w) => finishAfterStepup(d, call, site, stepup, w));
  return awaitWork(work, ctx, waitSeconds, d.pending);
}

/** `callSite` as a later part of a work already waiting for the owner (a site operation's first call, after its access grant). */
export async function callSiteWithin(d: McpDeps, call: SiteCall, w: PendingWork): Promise<CallToolResult> {
  const site = siteOf(call);
  const first = await sendOnce(d, call, site);
  if (first.kind === 'answer') return first.result;
  const stepup = await fileStepup(d, call, site, first);
  w.waitsOn(stepup.txnId);
  return finishAfterStepup(d, call, site, stepup, w);
}

export function siteOf(call: SiteCall): string {
  return call.site ? normalizeSiteId(call.site) : siteIdOfUrl(call.url);
}

type FiledStepup = { txnId: string; expiresAt: number; action: string; what: string };

/** Asks the owner for the step-up the site asked for; a JSON body binds it to that body (stepupDetailsFor). */
async function fileStepup(d: McpDeps, call: SiteCall, site: string, asked: StepupAsked): Promise<FiledStepup> {
  const action = asked.action ?? call.fallbackAction;
  const details = stepupDetailsFor(call, asked.summary, action);
  const created = await d.agent.requestStepup(site, action, details ? { details } : {});
  return { txnId: created.txnId, expiresAt: created.expiresAt, action, what: `the step-up "${action}" on ${site}` };
}

async function finishAfterStepup(d: McpDeps, call: SiteCall, site: string, stepup: FiledStepup, w: PendingWork): Promise<CallToolResult> {
  const answer = await d.agent.waitForApproval(stepup.txnId, w.waitOptions(stepup.expiresAt));
  const again = await sendOnce(d, call, site, answer.stepup_token);
  if (again.kind === 'answer') return again.result;
  throw new ToolFailure('stepup_refused', `the site asked for a step-up again after the owner approved "${stepup.action}"`, 'the site may expect another action text; call mandate_fetch again with the action the site names');
}

/** A site's `403 stepup_required`: the action it names and the summary it suggests, when it does. */
type StepupAsked = { kind: 'stepup'; action: string | undefined; summary: string | undefined };
type Sent = { kind: 'answer'; result: CallToolResult } | StepupAsked;

/** One send, cut after the site-call limit (30 s) including the reading of the answer. */
async function sendOnce(d: McpDeps, call: SiteCall, site: string, stepupToken?: string): Promise<Sent> {
  const timeout = AbortSignal.timeout(d.siteTimeoutMs);
  const signal = AbortSignal.any([timeout, d.shutdown]);
  const headers = new Headers(call.headers);
  // Set here, after the model's headers were checked: the model never sees nor sets it.
  if (stepupToken) headers.set('x-service-stepup', stepupToken);
  try {
    const res = await d.agent.fetch(call.url, { method: call.method, headers, ...(call.body !== undefined ? { body: call.body } : {}) }, { site, stepup: false, signal });
    const error = await siteError(res);
    if (res.status === 403 && error?.error === 'stepup_required' && !stepupToken) {
      await res.body?.cancel();
      return { kind: 'stepup', action: error.action, summary: error.summary };
    }
    if (res.status === 403 && error?.error === 'insufficient_scope') throw await siteScopeRefusal(d, site, `${call.method} ${call.url}`, res, call.scopes);
    const answer = await readSiteAnswer(res);
    return { kind: 'answer', result: toolResult({ ...answer }, describeAnswer(answer)) };
  } catch (e) {
    if (timeout.aborted) throw new ToolFailure('site_timeout', `${call.method} ${call.url} got no complete answer within ${duration(d.siteTimeoutMs)}; the call was cut`, 'try again later, or tell the user the site does not answer');
    if (e instanceof TypeError) throw new ToolFailure('site_unreachable', `${call.method} ${call.url} could not be reached (${e.message})`, 'check the URL; the site may be down');
    throw e;
  }
}

function duration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`;
}
