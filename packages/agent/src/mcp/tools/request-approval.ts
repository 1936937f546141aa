import { z } from 'zod';
import type { McpDeps } from '../context.ts';
import { defineTool } from '../define-tool.ts';
import { PendingWork } from '../pending.ts';
import { toolResult } from '../results.ts';
import { awaitWork } from '../waiting.ts';
import { siteArg, waitSecondsArg, waitSecondsOf } from './common.ts';

const host = z.string().max(253);
const details = z.strictObject({
  label: z.string().max(80).optional().describe('The button or step, as the owner should read it, e.g. "Place order"'),
  amount: z.string().max(40).optional().describe('e.g. "49.90 EUR"'),
  item: z.string().max(120).optional(),
  page: z.string().max(200).optional(),
  host: host.optional(),
  target_host: host.optional().describe('Where the form posts, when not the page\'s host'),
  path: z.string().max(300).regex(/^\/[\x20-\x7e]*$/, '"/" then printable ASCII').optional(),
  card_fields: z.boolean().optional(),
  password_fields: z.boolean().optional(),
  text_digests: z.array(z.string().regex(/^[0-9a-f]{64}$/, 'lowercase SHA-256 hex')).max(8).optional(),
});

export function requestApprovalTool(d: McpDeps) {
  return defineTool({
    name: 'mandate_request_approval',
    title: 'Mandate: ask the owner to approve an action',
    description: 'Asks the owner to approve one action on any site (no access grant needed), e.g. before pressing a "Pay" or "Delete" button, and waits for the answer. The owner\'s approval mode may approve it at once.',
    input: z.strictObject({
      site: siteArg,
      action: z.string().regex(/^[a-z0-9_:-]{1,64}$/, '1 to 64 of [a-z0-9_:-], e.g. checkout:submit').describe('A short machine name of the action, e.g. checkout:submit'),
      details: details.optional().describe('What the owner\'s card shows'),
      wait_seconds: waitSecondsArg,
    }),
    output: z.object({ status: z.string(), txn_id: z.string(), site: z.string(), action: z.string() }),
    async run(args, ctx) {
      const created = await d.agent.requestApproval(args.site, args.action, args.details ?? {});
      const approved = () => toolResult({ status: 'approved', txn_id: created.txnId, site: created.site, action: created.action }, `The owner approved ${created.action} on ${created.site}. Go ahead.`);
      if (created.status === 'approved') return approved();
      const work = new PendingWork(d.pending, created.txnId, `"${created.action}" on ${created.site}`, async (w) => {
        await d.agent.waitForApproval(created.txnId, w.waitOptions(created.expiresAt));
        return approved();
      });
      return awaitWork(work, ctx, waitSecondsOf(d, args), d.pending);
    },
  });
}
