import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AccessRequiredError } from '../../client/errors.ts';
import type { McpDeps } from '../context.ts';
import { fileAccessRequest } from '../file-access-request.ts';
import { guardedHeaders } from '../header-guard.ts';
import { MCP_LIMITS } from '../limits.ts';
import { PendingWork } from '../pending.ts';
import { callSite, callSiteWithin, type SiteCall } from '../site-call.ts';
import { ToolArgumentError, type SiteOperationTool } from '../site-tool.ts';
import type { McpTool } from '../tool.ts';
import { awaitWork } from '../waiting.ts';
import { accessGranted } from './request-access.ts';

/**
 * A site operation (`--openapi`) as a tool: its arguments become the request (the reader's
 * `toRequest`), then `mandate_fetch`'s path with the tool's name as the step-up action a site that
 * names none gets. Without access to the site, the first call asks the owner for the tool's scopes,
 * waits like mandate_request_access, then makes the call. With access (even without the tool's
 * scopes: the service files no second request while a grant lives) the call goes to the site; its
 * `403 insufficient_scope` becomes a tool error naming the scopes and the way on (missing-scope.ts).
 */
export function siteOperationTool(d: McpDeps, op: SiteOperationTool): McpTool {
  return {
    name: op.name,
    description: op.description,
    inputSchema: op.inputSchema,
    async run(args, ctx): Promise<CallToolResult> {
      const req = op.toRequest(args);
      const headers = guardedHeaders(req.headers);
      if (req.body !== undefined && Buffer.byteLength(req.body, 'utf8') > MCP_LIMITS.requestBodyBytes) throw new ToolArgumentError('body', `at most ${MCP_LIMITS.requestBodyBytes} bytes`);
      const call: SiteCall = { url: req.url, method: req.method.toUpperCase(), headers, ...(req.body !== undefined ? { body: req.body } : {}), site: op.site, fallbackAction: op.name, scopes: op.scopes };
      if (await hasAccess(d, op.site)) return callSite(d, call, ctx, d.waitSeconds);
      const filed = await fileAccessRequest(d, { site: op.site, scopes: [...op.scopes] });
      if (filed.kind === 'held') return callSite(d, call, ctx, d.waitSeconds); // granted meanwhile
      const { created } = filed;
      const work = new PendingWork(d.pending, created.txnId, `access to ${created.site} (${op.scopes.join(' ')}) for ${op.name}`, async (w) => {
        await accessGranted(d, created.txnId, created.site, created.expiresAt, w);
        return callSiteWithin(d, call, w);
      }, created.site);
      return awaitWork(work, ctx, d.waitSeconds, d.pending);
    },
  };
}

/** Whether a pass can be had for the site (a renewal, if due, is the first thing the call needs anyway). */
async function hasAccess(d: McpDeps, site: string): Promise<boolean> {
  try {
    await d.agent.pass(site);
    return true;
  } catch (e) {
    if (e instanceof AccessRequiredError) return false;
    throw e;
  }
}
