import type { Command } from '../command.ts';
import { agentFromDir } from '../agent-from-dir.ts';
import { str } from '../values.ts';

export const notifyCommand: Command = {
  name: 'notify',
  summary: 'send a one-way note to the owner\'s phone',
  usage: 'mandate-agent notify TEXT [--title TITLE] [--kind KIND]',
  help: `Sends a note to the owner's devices (POST /api/v1/agent-notify): nothing to approve, recorded in the
owner's Activity. Use it for "done", "stuck" or an end-of-session summary.

  --title TITLE   at most 200 characters
  --kind KIND     a short word of [a-z_], e.g. done, stuck, summary (default agent)`,
  options: { title: { type: 'string' }, kind: { type: 'string' } },
  positionals: { min: 1, max: 1 },

  async run(ctx, values, [text = '']) {
    const agent = agentFromDir(ctx);
    const title = str(values, 'title');
    const kind = str(values, 'kind');
    await agent.notify({ text, ...(title !== undefined ? { title } : {}), ...(kind !== undefined ? { kind } : {}) });
    ctx.out.result('Note sent to the owner.', { ok: true });
  },
};
