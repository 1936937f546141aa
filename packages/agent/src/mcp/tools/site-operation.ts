import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AccessRequiredError } from '../../client/errors.ts';
import type { McpDeps } from '../context.ts';
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
 * names none gets. Without access to the site (or without all of the tool's scopes) the first call
 * asks the owner for it, waits like mandate_request_access, then makes the call.
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
      const call: SiteCall = { url: req.url, method: req.method.toUpperCase(), headers, ...(req.body !== undefined ? { body: req.body } : {}), site: op.site, fallbackAction: op.name };
      const missing = await scopesToAskFor(d, op);
      if (!missing) return callSite(d, call, ctx, d.waitSeconds);
      const created = await d.agent.requestAccess({ site: op.site, scopes: missing });
      const work = new PendingWork(d.pending, created.txnId, `access to ${created.site} (${missing.join(' ')}) for ${op.name}`, async (w) => {
        await accessGranted(d, created.txnId, created.site, created.expiresAt, w);
        return callSiteWithin(d, call, w);
      });
      return awaitWork(work, ctx, d.waitSeconds, d.pending);
    },
  };
}

/**
 * undefined when the pass covers the tool's scopes; else the scopes to ask for: the tool's, plus
 * those already granted (an approval replaces the site's earlier grant, so nothing is lost).
 */
async function scopesToAskFor(d: McpDeps, op: SiteOperationTool): Promise<string[] | undefined> {
  let granted: string[] = [];
  try {
    granted = (await d.agent.pass(op.site)).scope;
  } catch (e) {
    if (!(e instanceof AccessRequiredError)) throw e;
  }
  if (granted.length && op.scopes.every((s) => granted.includes(s))) return undefined;
  return [...new Set([...granted, ...op.scopes])];
}
