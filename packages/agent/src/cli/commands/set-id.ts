import { MandateAgent } from '../../agent.ts';
import { MandateError } from '../../client/errors.ts';
import { isAgentId, loadKeyFile, saveKeyFile } from '../../keys/key-file.ts';
import type { Command } from '../command.ts';
import { UsageError } from '../exit-codes.ts';
import { flag } from '../values.ts';

export const setIdCommand: Command = {
  name: 'set-id',
  summary: 'record the agent id the owner got when registering the key',
  usage: 'mandate-agent set-id ag_... [--force]',
  help: `Records the agent id (ag_...) shown in the owner app after the owner registered this agent's
public key. The id is checked first: the service must accept this key as that agent
(GET /api/v1/agent-status), so a mistyped id is refused and nothing is saved.

  --force    replace an agent id already recorded (the kept passes of the old id are ignored)`,
  options: { force: { type: 'boolean' } },
  positionals: { min: 1, max: 1 },

  async run(ctx, values, [agentId = '']) {
    if (!isAgentId(agentId)) throw new UsageError(`not an agent id: ${JSON.stringify(agentId)} (expected ag_ followed by lower-case letters and digits)`, 'set-id');
    const file = loadKeyFile(ctx.dir);
    if (file.agentId && file.agentId !== agentId && !flag(values, 'force')) {
      throw new UsageError(`this key is already recorded as agent ${file.agentId}; add --force to replace it`, 'set-id');
    }
    const agent = new MandateAgent({ serviceUrl: file.serviceUrl, agentId, privateKey: file.key });
    const status = await agent.status().catch((e: unknown) => {
      if (e instanceof MandateError && e.status === 401) {
        throw new MandateError('service_error', { status: 401, detail: `the service does not accept this key as agent ${agentId}: ${e.detail}`, nextStep: 'check the agent id in the owner app, and that the owner pasted this agent\'s public key (mandate-agent whoami shows it)' });
      }
      throw e;
    });
    saveKeyFile(ctx.dir, { ...file, agentId });
    ctx.out.result(`Agent id recorded: ${agentId} (status: ${status.global_flag}).`, { agent_id: agentId, service_url: file.serviceUrl, global_flag: status.global_flag });
  },
};
