import { loadKeyFile } from '../../keys/key-file.ts';
import type { Command } from '../command.ts';

export const whoamiCommand: Command = {
  name: 'whoami',
  summary: 'show the local identity: agent id, service, public key (no network)',
  usage: 'mandate-agent whoami',
  help: 'Shows what the agent directory holds: the agent id, the service URL, the name, the public key and its\nthumbprint. It never shows the private key. Use `status` to ask the service.',
  options: {},
  positionals: { min: 0, max: 0 },

  async run(ctx) {
    const file = loadKeyFile(ctx.dir);
    const jkt = await file.key.thumbprint();
    ctx.out.result([
      `agent id:  ${file.agentId ?? '(none yet: run mandate-agent set-id ag_... once the owner registered the key, or pair it: mandate-agent pair CODE)'}`,
      `name:      ${file.name ?? ''}`,
      `service:   ${file.serviceUrl}`,
      `directory: ${ctx.dir}`,
      `jkt:       ${jkt}`,
      `public key: ${JSON.stringify(file.key.publicJwk)}`,
    ], { agent_id: file.agentId, name: file.name, service_url: file.serviceUrl, dir: ctx.dir, jkt, public_jwk: file.key.publicJwk });
  },
};
