import { z } from 'zod';
import type { McpDeps } from '../context.ts';
import { defineTool } from '../define-tool.ts';
import { fileAccessRequest } from '../file-access-request.ts';
import { PendingWork } from '../pending.ts';
import { toolResult } from '../results.ts';
import type { ToolCallContext } from '../tool.ts';
import { awaitWork } from '../waiting.ts';
import { scopesArg, siteArg, waitSecondsArg, waitSecondsOf } from './common.ts';

export function requestAccessTool(d: McpDeps) {
  return defineTool({
    name: 'mandate_request_access',
    title: 'Mandate: ask the owner for access to a site',
    description: 'Asks the owner (on their phone) to let this agent use a site with these scopes, and waits for the answer. Approved: the site can be called with mandate_fetch. Denied or expired: an error saying what to do next. While the agent has access to the site, no second request is filed: with every scope already granted it answers approved at once, else an error naming the scopes granted and how to get the others.',
    input: z.strictObject({
      site: siteArg,
      scopes: scopesArg,
      user_info: z.array(z.string().min(1)).optional().describe('Fields about the owner the site may receive, e.g. ["user:email"]'),
      wait_seconds: waitSecondsArg,
    }),
    output: z.object({ status: z.string(), txn_id: z.string(), site: z.string(), scopes: z.array(z.string()), grant_expires_at: z.string().nullable() }),
    run: (args, ctx) => requestAccessAndWait(d, { site: args.site, scopes: args.scopes, ...(args.user_info ? { userInfo: args.user_info } : {}) }, ctx, waitSecondsOf(d, args)),
  });
}

/** Files the access request and waits for the owner (or finds the access already granted). */
async function requestAccessAndWait(d: McpDeps, req: { site: string; scopes: string[]; userInfo?: string[] }, ctx: ToolCallContext, waitSeconds: number) {
  const filed = await fileAccessRequest(d, req);
  if (filed.kind === 'held') {
    const { pass } = filed;
    const until = pass.grantExpiresAt ? `, until ${pass.grantExpiresAt}` : '';
    return toolResult(
      { status: 'approved', site: pass.site, scopes: pass.scope, grant_expires_at: pass.grantExpiresAt },
      `The owner had already granted access to ${pass.site} (${pass.scope.join(' ')}${until}); nothing new was asked. Call it with mandate_fetch.`,
    );
  }
  const { created } = filed;
  const work = new PendingWork(d.pending, created.txnId, `access to ${created.site} (${req.scopes.join(' ')})`, (w) => accessGranted(d, created.txnId, created.site, created.expiresAt, w), created.site);
  return awaitWork(work, ctx, waitSeconds, d.pending);
}

/**
 * Waits for the owner's answer, then fetches the first pass at once: it tells the grant's scopes and
 * expiry, and `mandate_status` lists the site from then on.
 */
export async function accessGranted(d: McpDeps, txnId: string, site: string, expiresAt: number | undefined, w: PendingWork) {
  const answer = await d.agent.waitForApproval(txnId, w.waitOptions(expiresAt));
  const pass = await d.agent.pass(site);
  const until = pass.grantExpiresAt ? `, until ${pass.grantExpiresAt}` : '';
  return toolResult(
    { status: 'approved', txn_id: txnId, site, scopes: pass.scope.length ? pass.scope : answer.scopes, grant_expires_at: pass.grantExpiresAt },
    `The owner approved access to ${site} (${pass.scope.join(' ')}${until}). Call it with mandate_fetch.`,
  );
}
