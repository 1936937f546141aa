import { z } from 'zod';
import type { McpDeps } from '../context.ts';
import { defineTool } from '../define-tool.ts';
import { PendingWork } from '../pending.ts';
import { toolResult } from '../results.ts';
import { awaitWork } from '../waiting.ts';
import { waitSecondsArg, waitSecondsOf } from './common.ts';

export function waitTool(d: McpDeps) {
  return defineTool({
    name: 'mandate_wait',
    title: 'Mandate: wait for the owner\'s answer',
    description: 'Waits again for a request a tool answered {"status": "pending", "txn_id"} about, and answers what that tool would have: the site\'s answer of a mandate_fetch that needed a step-up, the grant of an access request, and so on.',
    input: z.strictObject({ txn_id: z.string().regex(/^[A-Za-z0-9_-]{1,100}$/, 'the txn_id a pending answer gave'), wait_seconds: waitSecondsArg }),
    run(args, ctx) {
      // A request this process did not file (another process, before a restart): its answer alone,
      // never its step-up token (a token without the call it was for is of no use to the model).
      const work = d.pending.get(args.txn_id) ?? new PendingWork(d.pending, args.txn_id, `request ${args.txn_id}`, async (w) => {
        const a = await d.agent.waitForApproval(args.txn_id, w.waitOptions());
        const what = a.kind === 'stepup' ? `the step-up "${a.action ?? ''}"` : a.kind === 'initial' ? `access (${a.scopes.join(' ')})` : a.kind;
        return toolResult({ status: 'approved', txn_id: args.txn_id, kind: a.kind, site: a.site, scopes: a.scopes, ...(a.action ? { action: a.action } : {}) }, `The owner approved ${what} on ${a.site}.`);
      });
      return awaitWork(work, ctx, waitSecondsOf(d, args), d.pending);
    },
  });
}
