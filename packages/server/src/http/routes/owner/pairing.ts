import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { iso } from '../../../domain/clock.ts';
import { PAIRING } from '../../../domain/agents/pairing.ts';
import { ReadableLine, Timestamp, withErrors } from '../../schemas/common.ts';

const PairingCodeIn = Type.Object({
  name: Type.Optional(ReadableLine({ minLength: 1, maxLength: 100, description: 'the agent\'s name; when left out, the agent\'s own name (or "New agent")' })),
});

const PairingCodeOut = Type.Object({
  code: Type.String({ description: 'one-time code, `XXXX-XXXX`, to give to the agent (`mandate-agent pair CODE`)' }),
  expires_at: Timestamp,
  expires_in: Type.Integer({ description: 'seconds the code stays valid' }),
  name: Type.Union([Type.String(), Type.Null()], { description: 'the name the agent will get, if the owner gave one' }),
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
    return { code: made.code, expires_at: iso(made.expiresAt), expires_in: Math.round(PAIRING.lifetimeMs / 1000), name: made.name };
  });
}
