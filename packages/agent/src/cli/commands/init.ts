import { existsSync } from 'node:fs';
import { normalizeServiceUrl } from '../../client/http.ts';
import { registerAgentAsOwner } from '../../client/owner.ts';
import { AgentKey } from '../../keys/agent-key.ts';
import { keyFilePath, loadKeyFile, saveKeyFile, type KeyFileContents } from '../../keys/key-file.ts';
import type { Command } from '../command.ts';
import { UsageError } from '../exit-codes.ts';
import { promptHidden } from '../prompt.ts';
import { str } from '../values.ts';

export const initCommand: Command = {
  name: 'init',
  summary: 'create the agent key (and register it with the owner\'s account)',
  usage: 'mandate-agent init --service URL --name NAME [--email OWNER_EMAIL]',
  help: `Creates the agent's key pair in the agent directory: key.json, mode 600, in a directory of mode 700.
Only the public key ever leaves this machine.

Without --email it prints the public key and the steps for the owner: paste the key in the owner
app at URL/app, then record the agent id it shows with: mandate-agent set-id ag_...

With --email it registers the key itself, signed in as the owner: the password comes from the
environment variable MANDATE_PASSWORD or, on a terminal, from a prompt (never from a flag). The
password is sent only to the service's sign-in and not kept.

Running init again on a key that has no agent id yet reuses that key (for example to register it
after a failed attempt). A registered key is never replaced: use another --dir for another agent.

  --service URL    the Mandate service (or MANDATE_URL)
  --name NAME      the agent's display name, shown to the owner
  --email EMAIL    the owner's account email: register the key right away`,
  options: { service: { type: 'string' }, name: { type: 'string' }, email: { type: 'string' } },
  positionals: { min: 0, max: 0 },

  async run(ctx, values) {
    const name = str(values, 'name');
    if (!name || !name.trim()) throw new UsageError('--name is required', 'init');
    const rawUrl = str(values, 'service') ?? ctx.env['MANDATE_URL'];
    if (!rawUrl) throw new UsageError('--service is required (or set MANDATE_URL)', 'init');
    let serviceUrl: string;
    try {
      serviceUrl = normalizeServiceUrl(rawUrl);
    } catch (e) {
      throw new UsageError((e as Error).message, 'init');
    }
    if (isPlainHttpToAnotherHost(serviceUrl)) ctx.out.note(`warning: ${serviceUrl} is plain http; use https for a service that is not on this machine`);

    let contents: KeyFileContents;
    let created = false;
    if (existsSync(keyFilePath(ctx.dir))) {
      const existing = loadKeyFile(ctx.dir);
      if (existing.agentId) throw new UsageError(`${ctx.dir} already holds the key of agent ${existing.agentId}; use another --dir for another agent`, 'init');
      contents = { ...existing, serviceUrl, name };
    } else {
      contents = { serviceUrl, agentId: null, name, key: await AgentKey.generate(), createdAt: new Date().toISOString() };
      created = true;
    }
    saveKeyFile(ctx.dir, contents);
    const jkt = await contents.key.thumbprint();
    const where = `${created ? 'Created a new agent key' : 'Using the unregistered agent key'} in ${ctx.dir} (key.json, mode 600)`;

    const email = str(values, 'email');
    if (email) {
      const password = ctx.env['MANDATE_PASSWORD'] || (await promptHidden(`Password of ${email} at ${serviceUrl}: `));
      if (!password) throw new UsageError('no password given', 'init');
      const agent = await registerAgentAsOwner({ serviceUrl, email, password, name, publicJwk: contents.key.publicJwk }).catch((e: unknown) => {
        ctx.out.note(`${where}; it is not registered yet. Run init again to retry, or let the owner paste its public key in ${serviceUrl}/app and run set-id.`);
        throw e;
      });
      saveKeyFile(ctx.dir, { ...contents, agentId: agent.id });
      ctx.out.result([where, `Registered agent ${agent.id} ("${agent.name}") with ${serviceUrl}.`, `Key thumbprint (jkt): ${jkt}`, 'Next: mandate-agent request --site SITE --scopes SCOPES --wait'], {
        dir: ctx.dir, service_url: serviceUrl, agent_id: agent.id, name: agent.name, jkt, public_jwk: contents.key.publicJwk, registered: true,
      });
      return;
    }

    ctx.out.result([
      where,
      'Public key (JWK) to give to the owner:',
      JSON.stringify(contents.key.publicJwk),
      `Key thumbprint (jkt): ${jkt}`,
      'Next steps:',
      `  1. The owner opens ${serviceUrl}/app, adds an agent named "${name}" and pastes the public key above.`,
      '  2. The app shows the new agent id (ag_...). Record it here with:',
      `       mandate-agent set-id ag_...${ctx.dirFlag}`,
    ], { dir: ctx.dir, service_url: serviceUrl, agent_id: null, name, jkt, public_jwk: contents.key.publicJwk, registered: false });
  },
};

function isPlainHttpToAnotherHost(url: string): boolean {
  const u = new URL(url);
  return u.protocol === 'http:' && !['localhost', '127.0.0.1', '[::1]'].includes(u.hostname);
}
