import type { Command } from '../command.ts';
import { agentFromDir } from '../agent-from-dir.ts';
import { UsageError } from '../exit-codes.ts';
import { wbaKeyFilePath } from '../../keys/wba-key.ts';

export const wbaCommand: Command = {
  name: 'wba',
  summary: 'Web Bot Auth: publish a signing key so sites can verify this agent\'s requests',
  usage: 'mandate-agent wba setup',
  help: `setup: generates an Ed25519 key beside the agent key (wba-key.json in the agent directory, 0600) if
there is none, publishes its public half with the service (POST /api/v1/wba/key), signs the key
directory the service serves at the agent's address and uploads that signature (POST /api/v1/wba/proof,
valid one hour). Prints the address sites see as Signature-Agent. Run it again to renew the directory
signature; the SDK renews it by itself before signed requests.`,
  options: {},
  positionals: { min: 1, max: 1 },

  async run(ctx, _values, positionals) {
    if (positionals[0] !== 'setup') throw new UsageError(`unknown wba command ${JSON.stringify(positionals[0])}; usage: mandate-agent wba setup`, 'wba');
    const agent = agentFromDir(ctx);
    const setup = await agent.setupWebBotAuth({ signal: ctx.signal });
    ctx.out.result([
      `Signature-Agent: ${setup.signatureAgent}`,
      `key id:          ${setup.keyid}`,
      `signed until:    ${new Date(setup.expiresAt * 1000).toISOString()}`,
      `key file:        ${wbaKeyFilePath(ctx.dir)}`,
    ], { signature_agent: setup.signatureAgent, host: setup.host, keyid: setup.keyid, expires_at: setup.expiresAt });
  },
};
