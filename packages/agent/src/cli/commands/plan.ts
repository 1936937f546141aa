import { readFileSync } from 'node:fs';
import type { Command } from '../command.ts';
import { agentFromDir } from '../agent-from-dir.ts';
import type { PlanInput, PlanView } from '../../agent.ts';
import { UsageError } from '../exit-codes.ts';
import { str } from '../values.ts';

const RESULTS = ['done', 'failed', 'unknown'] as const;

function planText(p: PlanView): string {
  const steps = p.steps.map((s) => `  ${s.id}  ${s.button}: ${s.approved ? `pre-approved, ${s.uses_left} use(s) left` : s.pre_approvable ? 'asks' : 'always asks'}, ${s.state}${s.reason ? ` (${s.reason})` : ''}`);
  return [`Plan ${p.plan_id} "${p.title}": ${p.status}`, ...steps].join('\n');
}

/** The plan JSON of `plan submit`: a file, or - for standard input. */
function readPlan(path: string): PlanInput {
  let text: string;
  try {
    text = readFileSync(path === '-' ? 0 : path, 'utf8');
  } catch (e) {
    throw new UsageError(`cannot read the plan file ${path}: ${e instanceof Error ? e.message : String(e)}`, 'plan');
  }
  try {
    return JSON.parse(text) as PlanInput;
  } catch {
    throw new UsageError(`the plan file ${path} is not JSON`, 'plan');
  }
}

export const planCommand: Command = {
  name: 'plan',
  summary: 'submit a scheduled task\'s plan for the owner to pre-approve; read it; report a step\'s result',
  usage: 'mandate-agent plan submit FILE | plan status PLAN_ID | plan result TXN_ID --result done|failed|unknown',
  help: `Plans (decisions §20): the owner pre-approves some steps of a scheduled task on one card; at run time an
approval that matches a chosen step exactly passes without a card.

  plan submit FILE      FILE (or - for standard input) holds {title, start_at, end_at, steps: [...]}, times in
                        Unix seconds; answers plan_id and the card's txn_id
  plan status PLAN_ID   each step: pre-approved or asking, uses left, state
  plan result TXN_ID    what the click of a pre-approved step (its approval TXN_ID) did:
    --result RESULT     done, failed or unknown`,
  options: { result: { type: 'string' } },
  positionals: { min: 2, max: 2 },

  async run(ctx, values, [action = '', arg = '']) {
    const agent = agentFromDir(ctx);
    if (action === 'submit') {
      const created = await agent.submitPlan(readPlan(arg));
      ctx.out.result(`Plan ${created.plan_id} sent to the owner (card ${created.txn_id}); nothing is pre-approved until they answer.`, { ok: true, ...created });
      return;
    }
    if (action === 'status') {
      const view = await agent.planStatus(arg);
      ctx.out.result(planText(view), { ok: true, ...view });
      return;
    }
    if (action === 'result') {
      const result = str(values, 'result');
      if (!RESULTS.includes(result as (typeof RESULTS)[number])) throw new UsageError('--result must be done, failed or unknown', 'plan');
      const view = await agent.planResult(arg, result as (typeof RESULTS)[number]);
      ctx.out.result(planText(view), { ok: true, ...view });
      return;
    }
    throw new UsageError(`unknown plan action ${JSON.stringify(action)}: use submit, status or result`, 'plan');
  },
};
