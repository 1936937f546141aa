import { z } from 'zod';
import type { McpDeps } from '../context.ts';
import { defineTool } from '../define-tool.ts';
import { toolResult } from '../results.ts';

export function notifyTool(d: McpDeps) {
  return defineTool({
    name: 'mandate_notify_owner',
    title: 'Mandate: tell the owner something',
    description: 'Sends a one-way note to the owner\'s phone and inbox (no answer is awaited), e.g. "Done: order placed" or "Stuck: the site wants a captcha".',
    input: z.strictObject({
      text: z.string().min(1).max(2000).describe('The note'),
      title: z.string().min(1).max(200).optional(),
      kind: z.string().regex(/^[a-z_]{1,32}$/, '1 to 32 of [a-z_], e.g. done, stuck, summary').optional(),
    }),
    output: z.object({ status: z.string(), inbox: z.boolean(), devices: z.number() }),
    async run(args) {
      const sent = await d.agent.notify({ text: args.text, ...(args.title ? { title: args.title } : {}), ...(args.kind ? { kind: args.kind } : {}) });
      return toolResult({ status: 'sent', ...sent }, `Sent to the owner${sent.devices ? ` (${sent.devices} device${sent.devices === 1 ? '' : 's'})` : ''}${sent.inbox ? ', kept in their inbox' : ''}.`);
    },
  });
}
