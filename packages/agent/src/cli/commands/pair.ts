import type { Command } from '../command.ts';
import { serviceUrlFrom, unregisteredKey } from '../key-setup.ts';
import { pairAndRecord, pairingCode } from '../pairing.ts';
import { str } from '../values.ts';

export const pairCommand: Command = {
  name: 'pair',
  summary: 'register this agent with the one-time code from the owner app',
  usage: 'mandate-agent pair CODE --service URL [--name NAME]',
  help: `Pairs this agent with its owner: the owner presses "Add agent" in the owner app (Agents) and
gets a one-time code (XXXX-XXXX, valid 10 minutes); this command makes the agent key if there is
none yet (key.json, mode 600, in a directory of mode 700), sends only its public key with the code,
and records the agent id the service answers. No owner password or session reaches this machine.

A code works once. If it was mistyped or expired, the key is kept: ask for a new code and run pair
again. A registered key is never replaced: use another --dir for another agent.

  --service URL    the Mandate service (or MANDATE_URL; else the one an unregistered key names)
  --name NAME      the agent's name, used when the owner did not name it in the app`,
  options: { service: { type: 'string' }, name: { type: 'string' } },
  positionals: { min: 1, max: 1 },

  async run(ctx, values, [typed = '']) {
    const code = pairingCode(typed, 'pair');
    const serviceUrl = serviceUrlFrom(ctx, values, 'pair', unregisteredKey(ctx, 'pair')?.serviceUrl);
    const name = str(values, 'name')?.trim() || null;
    await pairAndRecord(ctx, { serviceUrl, code, name, command: 'pair' });
  },
};
