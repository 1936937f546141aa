import { registerAgentAsOwner } from '../../client/owner.ts';
import { saveKeyFile } from '../../keys/key-file.ts';
import type { CliContext, Command } from '../command.ts';
import { UsageError } from '../exit-codes.ts';
import { prepareKey, serviceUrlFrom } from '../key-setup.ts';
import { pairAndRecord, pairingCode } from '../pairing.ts';
import { promptHidden } from '../prompt.ts';
import { str } from '../values.ts';

// `--email` (sign in as the owner with MANDATE_PASSWORD, or a prompt) still works for the scripts
// and tests that use it, but is no longer offered: an owner's password does not belong on the
// agent's machine. `--code` (pairing) replaces it.

export const initCommand: Command = {
  name: 'init',
  summary: 'create the agent key (and pair it with the owner\'s code)',
  usage: 'mandate-agent init --service URL [--name NAME] [--code CODE]',
  help: `Creates the agent's key pair in the agent directory: key.json, mode 600, in a directory of mode 700.
Only the public key ever leaves this machine.

With --code it also pairs the key with its owner, as \`mandate-agent pair CODE\` does: the owner
presses "Add agent" in the owner app (Agents) and reads out the one-time code it shows.

Without --code it prints the public key and the two ways to register it: a pairing code from the
owner (mandate-agent pair CODE), or the owner pastes the public key in the owner app at URL/app
and you record the agent id it shows with: mandate-agent set-id ag_...

Running init again on a key that has no agent id yet reuses that key (for example to register it
after a failed attempt). A registered key is never replaced: use another --dir for another agent.

  --service URL    the Mandate service (or MANDATE_URL)
  --name NAME      the agent's display name, shown to the owner (required without --code)
  --code CODE      the owner's one-time pairing code: register the key right away`,
  options: { service: { type: 'string' }, name: { type: 'string' }, code: { type: 'string' }, email: { type: 'string' } },
  positionals: { min: 0, max: 0 },

  async run(ctx, values) {
    const name = str(values, 'name')?.trim() || null;
    const typedCode = str(values, 'code');
    const email = str(values, 'email');
    if (typedCode !== undefined && email !== undefined) throw new UsageError('give --code or --email, not both', 'init');
    const code = typedCode === undefined ? undefined : pairingCode(typedCode, 'init');
    if (!name && !code) throw new UsageError('--name is required (or pair with --code)', 'init');
    const serviceUrl = serviceUrlFrom(ctx, values, 'init');
    if (code) return pairAndRecord(ctx, { serviceUrl, code, name, command: 'init' });
    if (email) return registerWithPassword(ctx, serviceUrl, name ?? '', email);

    const { contents, jkt, where } = await prepareKey(ctx, serviceUrl, name, 'init');
    ctx.out.result([
      where,
      'Public key (JWK):',
      JSON.stringify(contents.key.publicJwk),
      `Key thumbprint (jkt): ${jkt}`,
      'Next, one of:',
      `  a. The owner opens ${serviceUrl}/app, Agents, and presses "Add agent" with the key field empty.`,
      '     The app shows a one-time code; pair with it here:',
      `       mandate-agent pair CODE${ctx.dirFlag}`,
      `  b. Or the owner pastes the public key above under "Its public key" in ${serviceUrl}/app and`,
      '     presses "Add agent". The app shows the new agent id (ag_...); record it here with:',
      `       mandate-agent set-id ag_...${ctx.dirFlag}`,
    ], { dir: ctx.dir, service_url: serviceUrl, agent_id: null, name, jkt, public_jwk: contents.key.publicJwk, registered: false });
  },
};

/** The old `--email` path: signs in as the owner on this machine (see the comment above). */
async function registerWithPassword(ctx: CliContext, serviceUrl: string, name: string, email: string): Promise<void> {
  const { contents, jkt, where } = await prepareKey(ctx, serviceUrl, name, 'init');
  const password = ctx.env['MANDATE_PASSWORD'] || (await promptHidden(`Password of ${email} at ${serviceUrl}: `));
  if (!password) throw new UsageError('no password given', 'init');
  const agent = await registerAgentAsOwner({ serviceUrl, email, password, name, publicJwk: contents.key.publicJwk }).catch((e: unknown) => {
    ctx.out.note(`${where}; it is not registered yet. Run init again to retry, or pair it with a code from the owner app: mandate-agent pair CODE${ctx.dirFlag}`);
    throw e;
  });
  saveKeyFile(ctx.dir, { ...contents, agentId: agent.id });
  ctx.out.result([where, `Registered agent ${agent.id} ("${agent.name}") with ${serviceUrl}.`, `Key thumbprint (jkt): ${jkt}`, 'Next: mandate-agent request --site SITE --scopes SCOPES --wait'], {
    dir: ctx.dir, service_url: serviceUrl, agent_id: agent.id, name: agent.name, jkt, public_jwk: contents.key.publicJwk, registered: true,
  });
}
