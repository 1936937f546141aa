import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { withErrors } from '../../schemas/common.ts';
import { CHECK_AGENT_LIMIT, CHECK_AGENT_REQUEST_MAX_BYTES } from '../../../domain/wba/check-agent.ts';

/** What each outcome means; shared by the OpenAPI description and the docs page. */
export const CHECK_OUTCOMES = {
  verified: 'the request carries a `web-bot-auth` signature covering `@authority` and `Signature-Agent`, unexpired, that verifies with a key listed in the directory at its `Signature-Agent` address',
  invalid: 'the request is signed, but the signature is malformed, has no `web-bot-auth` tag, is expired or not yet valid, leaves out `@authority` or `Signature-Agent`, covers a part the pasted request lacks, or does not verify with the directory\'s key',
  unverified: 'the request is signed, but its key could not be looked up: no `Signature-Agent`, the directory could not be fetched (refused address, redirect, timeout, not JSON) or does not list the `keyid`; with `address`, the directory could not be read',
  unsigned: 'the request has no `Signature-Input` and `Signature`',
  found: 'with `address`: the directory was read; `keys` lists its Ed25519 keys (possibly none)',
} as const;

export const CheckAgentOut = Type.Object({
  outcome: Type.Union(Object.keys(CHECK_OUTCOMES).map((k) => Type.Literal(k)), { description: Object.entries(CHECK_OUTCOMES).map(([k, v]) => `\`${k}\`: ${v}.`).join(' ') }),
  agent: Type.Union([Type.String(), Type.Null()], { description: 'the agent\'s address (`Signature-Agent`, read as a quoted string or as the dictionary member named like the signature\'s label), or the address checked; null when none' }),
  ours: Type.Boolean({ description: 'the address is one of this service\'s agents (its directory is read from here, not fetched)' }),
  keys: Type.Array(Type.String(), { description: 'RFC 7638 thumbprints of the Ed25519 keys the directory lists' }),
  detail: Type.String({ description: 'one sentence on why' }),
});

const CheckAgentIn = Type.Object({
  request: Type.Optional(Type.String({ minLength: 1, maxLength: CHECK_AGENT_REQUEST_MAX_BYTES, description: `a raw HTTP request as pasted: request line and header fields (at most ${CHECK_AGENT_REQUEST_MAX_BYTES} bytes)` })),
  address: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'an agent\'s address (its `Signature-Agent`)' })),
});

export async function checkAgentRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  app.post('/api/v1/check-agent', {
    schema: {
      summary: 'Check an agent (Web Bot Auth)',
      description: `Send exactly one of \`request\` (a pasted HTTP request: is it signed by a Web Bot Auth agent?) or \`address\` (what does this agent's key directory list?); both or neither: 400. Directories of other services are fetched through the outbound guard (https: only, public addresses only, no redirects followed, 5 s, 64 kB); this service's agents are read directly. Outcomes: ${Object.entries(CHECK_OUTCOMES).map(([k, v]) => `\`${k}\`: ${v}.`).join(' ')} 400 a request over ${CHECK_AGENT_REQUEST_MAX_BYTES} bytes or without a request line and Host. ${CHECK_AGENT_LIMIT.perAddress} checks per ${CHECK_AGENT_LIMIT.windowSec / 60} minutes per client address, then 429 with Retry-After. No sign-in needed; the HTML twin is \`/tools/check-agent\`.`,
      tags: ['site'],
      body: CheckAgentIn,
      response: withErrors({ 200: CheckAgentOut }, 400, 429),
    },
  }, async (request) => s.agentChecks.check(request.body, request.ip));
}
