import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { agentPairCommand } from '@mandate/protocol/agent-command';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { iso } from '../../../clock.ts';
import { PAIRING } from '../../../domain/agents/pairing.ts';
import { ReadableLine, Timestamp, withErrors } from '../../schemas/common.ts';

const PairingCodeIn = Type.Object({
  name: Type.Optional(ReadableLine({ minLength: 1, maxLength: 100, description: 'the agent\'s name; when left out, the agent\'s own name (or "New agent")' })),
});

const PairingCodeOut = Type.Object({
  code: Type.String({ description: 'one-time code, `XXXX-XXXX`, to give to the agent (`mandate-agent pair CODE`; see `command`)' }),
  expires_at: Timestamp,
  expires_in: Type.Integer({ description: 'seconds the code stays valid' }),
  name: Type.Union([Type.String(), Type.Null()], { description: 'the name the agent will get, if the owner gave one' }),
  command: Type.String({ description: 'the command that redeems the code on the agent\'s machine, as the owner app shows it: `npx --yes --package=<BASE_URL>/download/agent mandate-agent pair CODE --service <BASE_URL>` (the registry package named by AGENT_PACKAGE in place of the download when set); it needs Node 20+ and npm' }),
});

export async function pairingCodeRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const { pairing } = s;

  app.post('/api/agents/pairing-codes', {
    schema: {
      summary: 'A one-time code that pairs an agent with this owner',
      description: `The agent redeems it with its public key at POST /api/v1/agents/pair, so no owner credential goes to the agent's machine. ${PAIRING.codeLength} characters from an alphabet without look-alikes, valid ${PAIRING.lifetimeMs / 60_000} minutes, usable once; only its hash is stored. At most ${PAIRING.createsPerHour} codes per owner per hour, then 429 with Retry-After.`,
      tags: ['agents'],
      body: Type.Optional(Type.Union([PairingCodeIn, Type.Null()])),
      response: withErrors({ 200: PairingCodeOut }, 400, 401, 403, 429),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    const made = await pairing.createCode(user.id, request.body?.name);
    const command = agentPairCommand({ baseUrl: s.config.baseUrl, agentPackage: s.config.agentPackage }, made.code);
    return { code: made.code, expires_at: iso(made.expiresAt), expires_in: Math.round(PAIRING.lifetimeMs / 1000), name: made.name, command };
  });
}
