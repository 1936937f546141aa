import type { Command } from '../command.ts';
import { agentFromDir } from '../agent-from-dir.ts';
import { EXIT } from '../exit-codes.ts';

export const statusCommand: Command = {
  name: 'status',
  summary: 'ask the service whether this agent is still authorized',
  usage: 'mandate-agent status',
  help: `Asks the service (GET /api/v1/agent-status) for this agent's global flag (ok, suspicious or revoked)
and the sites whose access was revoked. Exit code 1 when the owner revoked or removed the agent.`,
  options: {},
  positionals: { min: 0, max: 0 },

  async run(ctx) {
    const agent = agentFromDir(ctx);
    const status = await agent.status();
    const sites = status.revoked_sites.length ? status.revoked_sites.join(', ') : 'none';
    ctx.out.result([`agent ${status.agent_id}: ${status.global_flag}`, `revoked sites: ${sites}`], { ...status });
    if (status.global_flag !== 'revoked') return EXIT.ok;
    ctx.out.explainRevoked('the service reads its flag as revoked');
    return EXIT.refused;
  },
};
