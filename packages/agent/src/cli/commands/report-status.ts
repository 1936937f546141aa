import type { Command } from '../command.ts';
import { agentFromDir } from '../agent-from-dir.ts';
import { str } from '../values.ts';

export const reportStatusCommand: Command = {
  name: 'report-status',
  summary: 'tell the owner\'s dashboard what the agent is doing',
  usage: 'mandate-agent report-status TEXT [--site SITE]',
  help: `Reports the agent's current status (POST /api/v1/agent-status), 1 to 500 characters. The latest
status per site is kept and shown to the owner.

  --site SITE   the site the status is about (default: the agent's general status)`,
  options: { site: { type: 'string' } },
  positionals: { min: 1, max: 1 },

  async run(ctx, values, [status = '']) {
    const agent = agentFromDir(ctx);
    const site = str(values, 'site');
    await agent.reportStatus({ status, ...(site !== undefined ? { site } : {}) });
    ctx.out.result('Status reported.', { ok: true });
  },
};
