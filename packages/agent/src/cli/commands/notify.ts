import type { Command } from '../command.ts';
import { agentFromDir } from '../agent-from-dir.ts';
import { str } from '../values.ts';

export const notifyCommand: Command = {
  name: 'notify',
  summary: 'send a one-way note to the owner\'s phone',
  usage: 'mandate-agent notify TEXT [--title TITLE] [--kind KIND]',
  help: `Sends a note to the owner (POST /api/v1/agent-notify): nothing to approve. It is kept in the owner's
inbox and Activity and pushed to their devices that take notes; the answer says where it went. Use it for "done", "stuck" or an end-of-session summary.

  --title TITLE   at most 200 characters
  --kind KIND     a short word of [a-z_], e.g. done, stuck, summary (default agent)`,
  options: { title: { type: 'string' }, kind: { type: 'string' } },
  positionals: { min: 1, max: 1 },

  async run(ctx, values, [text = '']) {
    const agent = agentFromDir(ctx);
    const title = str(values, 'title');
    const kind = str(values, 'kind');
    const went = await agent.notify({ text, ...(title !== undefined ? { title } : {}), ...(kind !== undefined ? { kind } : {}) });
    const where = went.devices > 0
      ? `Note kept in the owner's inbox and pushed to ${went.devices} of their device${went.devices === 1 ? '' : 's'}.`
      : 'Note kept in the owner\'s inbox and Activity; no device was notified (none set up for notifications, notes switched off, or quiet hours).';
    ctx.out.result(where, { ok: true, ...went });
  },
};
