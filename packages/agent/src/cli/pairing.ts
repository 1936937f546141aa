import type { EcP256PublicJwk } from '@mandate/protocol';
import { MandateError } from '../client/errors.ts';
import { ServiceClient, type FetchLike } from '../client/http.ts';
import { saveKeyFile } from '../keys/key-file.ts';
import type { CliContext } from './command.ts';
import { UsageError } from './exit-codes.ts';
import { shellQuote } from './invocation.ts';
import { prepareKey } from './key-setup.ts';

/** The service's pairing alphabet (no 0/O, 1/I/L) and length; checked here to catch typos early. */
const ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
const LENGTH = 8;

/** The code as typed (any case, spaces and dashes anywhere) as `XXXX-XXXX`, or a usage error. */
export function pairingCode(typed: string, command: string): string {
  const code = typed.toUpperCase().replace(/[\s-]/g, '');
  if (code.length !== LENGTH || [...code].some((c) => !ALPHABET.includes(c))) {
    throw new UsageError(`not a pairing code: ${JSON.stringify(typed)} (8 letters and digits like K7QM-3XWP, from the owner app: Agents, "Add agent")`, command);
  }
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

export type PairedAgent = { id: string; name: string; jkt?: string };

/**
 * Redeems the owner's one-time pairing code with the agent's public key
 * (`POST /api/v1/agents/pair`): the service creates the agent under that owner. No owner
 * credential is involved; the code works once, for 10 minutes.
 */
export async function redeemPairingCode(opts: { serviceUrl: string; code: string; name: string | null; publicJwk: EcP256PublicJwk; fetch?: FetchLike }): Promise<PairedAgent> {
  const client = new ServiceClient({ serviceUrl: opts.serviceUrl, ...(opts.fetch ? { fetch: opts.fetch } : {}) });
  const body = { code: opts.code, jwk: opts.publicJwk, ...(opts.name ? { name: opts.name } : {}) };
  const answer = await client.call<{ agent_id?: unknown; name?: unknown; jkt?: unknown }>('POST', '/api/v1/agents/pair', { body });
  if (typeof answer.agent_id !== 'string') throw new MandateError('service_error', { detail: 'the answer carries no agent_id', method: 'POST', path: '/api/v1/agents/pair' });
  return { id: answer.agent_id, name: typeof answer.name === 'string' ? answer.name : (opts.name ?? ''), ...(typeof answer.jkt === 'string' ? { jkt: answer.jkt } : {}) };
}

/** `pair` and `init --code`: make (or reuse) the key, redeem the code, record the agent id. */
export async function pairAndRecord(ctx: CliContext, opts: { serviceUrl: string; code: string; name: string | null; command: string }): Promise<void> {
  const { contents, jkt, where } = await prepareKey(ctx, opts.serviceUrl, opts.name, opts.command);
  const agent = await redeemPairingCode({ serviceUrl: opts.serviceUrl, code: opts.code, name: contents.name, publicJwk: contents.key.publicJwk }).catch((e: unknown) => {
    ctx.out.note(`${where}; it is not registered yet. Ask the owner for a new code (owner app, Agents, "Add agent") and run: mandate-agent pair CODE --service ${shellQuote(opts.serviceUrl)}${ctx.dirFlag}`);
    throw e;
  });
  saveKeyFile(ctx.dir, { ...contents, agentId: agent.id, name: agent.name || contents.name });
  ctx.out.result([where, `Paired: agent ${agent.id} ("${agent.name}") at ${opts.serviceUrl}.`, `Key thumbprint (jkt): ${jkt}`, `Next: mandate-agent request --site SITE --scopes SCOPES --wait${ctx.dirFlag}`], {
    dir: ctx.dir, service_url: opts.serviceUrl, agent_id: agent.id, name: agent.name, jkt, public_jwk: contents.key.publicJwk, registered: true,
  });
}
