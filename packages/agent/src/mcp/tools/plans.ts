import { z } from 'zod';
import type { PlanView } from '../../agent.ts';
import type { McpDeps } from '../context.ts';
import { defineTool } from '../define-tool.ts';
import { PendingWork } from '../pending.ts';
import { toolResult } from '../results.ts';
import { awaitWork } from '../waiting.ts';
import { waitSecondsArg, waitSecondsOf } from './common.ts';

// The shapes of decisions §20; the rules that span fields (which buttons need texts or a path, the
// window) are the service's, and its 400 names the step and the rule.
const step = z.strictObject({
  id: z.string().regex(/^[a-z0-9_-]{1,24}$/, '1 to 24 of [a-z0-9_-]').optional().describe('Default: its position (1-based)'),
  url: z.string().regex(/^https:\/\//, 'an https URL').max(2000).describe('The page the step runs on'),
  path: z.string().regex(/^\/[\x20-\x7e]{0,299}$/, '"/" then printable ASCII, at most 300; a trailing * matches any rest').optional(),
  button: z.string().min(1).max(80).describe('The button label'),
  texts: z.array(z.string().min(1).max(10_000)).max(4).optional().describe('Texts the click sends (needed for publish buttons); only their digests leave this process'),
  after: z.array(z.string()).optional().describe('Ids of earlier steps that must be done first'),
  uses: z.number().int().min(1).max(5).optional(),
});

const planView = z.object({ plan_id: z.string(), title: z.string(), status: z.string(), start_at: z.number(), end_at: z.number(), steps: z.array(z.looseObject({ id: z.string(), button: z.string(), state: z.string(), approved: z.boolean() })) });

function describePlan(p: PlanView): string {
  const steps = p.steps.map((s) => `- ${s.id} "${s.button}": ${s.approved ? 'pre-approved' : 'will ask'}, ${s.state}${s.reason ? ` (${s.reason})` : ''}`);
  return [`Plan ${p.plan_id} "${p.title}": ${p.status}.`, ...steps].join('\n');
}

export function planSubmitTool(d: McpDeps) {
  return defineTool({
    name: 'mandate_plan_submit',
    title: 'Mandate: ask the owner to pre-approve a plan',
    description: 'Submits a scheduled task\'s plan (its steps: page, button, texts) for the owner to pre-approve with one card, and waits for the answer. Later, approvals asked for with mandate_request_approval that match a pre-approved step exactly pass without a card.',
    input: z.strictObject({
      title: z.string().min(1).max(80),
      start_at: z.number().int().describe('Unix seconds: from now to 30 days ahead'),
      end_at: z.number().int().describe('Unix seconds: 60 s to 24 h after start_at'),
      steps: z.array(step).min(1).max(20),
      wait_seconds: waitSecondsArg,
    }),
    output: planView.extend({ txn_id: z.string() }),
    async run(args, ctx) {
      const { wait_seconds: _wait, ...plan } = args;
      const created = await d.agent.submitPlan(plan);
      const work = new PendingWork(d.pending, created.txn_id, `the plan "${args.title}"`, async (w) => {
        await d.agent.waitForApproval(created.txn_id, w.waitOptions(created.expires_in ? Date.now() + created.expires_in * 1000 : undefined));
        const view = await d.agent.planStatus(created.plan_id);
        return toolResult({ ...view, txn_id: created.txn_id }, describePlan(view));
      });
      return awaitWork(work, ctx, waitSecondsOf(d, args), d.pending);
    },
  });
}

export function planStatusTool(d: McpDeps) {
  return defineTool({
    name: 'mandate_plan_status',
    title: 'Mandate: a plan\'s state',
    description: 'A submitted plan as it stands: each step pre-approved or asking, its uses left and what has happened.',
    input: z.strictObject({ plan_id: z.string().regex(/^p_[A-Za-z0-9_-]{1,100}$/, 'a plan id (p_...)') }),
    output: planView,
    async run(args) {
      const view = await d.agent.planStatus(args.plan_id);
      return toolResult({ ...view }, describePlan(view));
    },
  });
}
