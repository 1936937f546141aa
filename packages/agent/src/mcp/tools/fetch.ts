import { z } from 'zod';
import type { McpDeps } from '../context.ts';
import { defineTool } from '../define-tool.ts';
import { guardedHeaders } from '../header-guard.ts';
import { MCP_LIMITS } from '../limits.ts';
import { callSite } from '../site-call.ts';
import { ToolArgumentError } from '../site-tool.ts';
import { actionArg, httpUrlArg, siteArg, waitSecondsArg, waitSecondsOf } from './common.ts';

const siteAnswerSchema = z.object({ status: z.number(), content_type: z.string(), body: z.string(), truncated: z.boolean(), location: z.string().optional() });

export function fetchTool(d: McpDeps) {
  return defineTool({
    name: 'mandate_fetch',
    title: 'Mandate: call a site as this agent',
    description: `Calls a site with this agent's pass (got or renewed as needed; the site must have granted access, see mandate_request_access). When the site asks for a step-up (403 stepup_required), the owner is asked to approve the action on their phone and the call is sent once more. When the agent's access lacks the scope the call needs (403 insufficient_scope), an error names the scopes and what to do. Answers {status, content_type, body (text, at most 64 kB), truncated}. Request bodies up to 1 MB; ${MCP_LIMITS.siteCallMs / 1000} s per site call.`,
    input: z.strictObject({
      url: httpUrlArg.describe('The URL to call'),
      method: z.string().regex(/^[A-Za-z]{1,16}$/, 'an HTTP method such as GET or POST').optional().describe('Default GET, or POST with a body'),
      headers: z.record(z.string(), z.string()).optional().describe('Extra request headers; never Authorization, DPoP, Cookie or the step-up headers (added here)'),
      body: z.union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())]).optional().describe('A text body, or a JSON value sent as application/json'),
      action: actionArg.optional().describe('What to ask the owner to approve if the site asks for a step-up without naming the action (default "METHOD /path")'),
      site: siteArg.optional().describe('The site id when it is not the URL\'s host'),
      wait_seconds: waitSecondsArg,
    }),
    output: siteAnswerSchema.extend({ status: z.union([z.number(), z.literal('pending')]), txn_id: z.string() }),
    run(args, ctx) {
      const headers = guardedHeaders(args.headers);
      const body = args.body === undefined ? undefined : typeof args.body === 'string' ? args.body : JSON.stringify(args.body);
      if (body !== undefined && Buffer.byteLength(body, 'utf8') > MCP_LIMITS.requestBodyBytes) throw new ToolArgumentError('body', `at most ${MCP_LIMITS.requestBodyBytes} bytes`);
      if (body !== undefined && typeof args.body !== 'string' && !headers.has('content-type')) headers.set('content-type', 'application/json');
      const method = (args.method ?? (body !== undefined ? 'POST' : 'GET')).toUpperCase();
      if (body !== undefined && (method === 'GET' || method === 'HEAD')) throw new ToolArgumentError('body', `a ${method} request cannot carry a body`);
      const path = new URL(args.url).pathname;
      return callSite(d, { url: args.url, method, headers, ...(body !== undefined ? { body } : {}), ...(args.site ? { site: args.site } : {}), fallbackAction: args.action ?? `${method} ${path}` }, ctx, waitSecondsOf(d, args));
    },
  });
}
