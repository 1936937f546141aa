import { z } from 'zod';
import type { McpDeps } from '../context.ts';
import { defineTool } from '../define-tool.ts';
import { toolResult } from '../results.ts';
import { httpUrlArg } from './common.ts';

export function takeoverTool(d: McpDeps) {
  return defineTool({
    name: 'mandate_request_takeover',
    title: 'Mandate: ask the owner to take over the browser',
    description: 'Asks the owner to take over the browser for a step only they can do (a login, a captcha, a payment form). The owner gets a card on their phone; answers the link they open. At most one open take-over; it lasts 10 minutes.',
    input: z.strictObject({
      url: httpUrlArg.describe('The page where the owner is needed'),
      reason: z.string().min(1).max(200).describe('What the owner should do there, e.g. "Log in with your bank"'),
    }),
    output: z.object({ status: z.string(), takeover_id: z.string(), owner_url: z.string(), expires_in: z.number() }),
    async run(args) {
      // The relay token (agentToken) stays in this process: it streams the browser, which the model does not hold.
      const t = await d.agent.requestTakeover({ url: args.url, reason: args.reason });
      const ownerUrl = `${d.agent.serviceUrl}/app/takeover/${encodeURIComponent(t.takeoverId)}`;
      return toolResult(
        { status: 'requested', takeover_id: t.takeoverId, owner_url: ownerUrl, expires_in: t.expiresIn },
        `The owner was asked to take over (${t.takeoverId}); they open ${ownerUrl} from the card on their phone. It stays open ${Math.round(t.expiresIn / 60)} minutes.`,
      );
    },
  });
}
