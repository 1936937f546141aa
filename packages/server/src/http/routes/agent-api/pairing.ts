import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { PAIRING } from '../../../domain/agents/pairing.ts';
import { agentJkt } from '../../../domain/agents/agent-key.ts';
import { ReadableLine, withErrors } from '../../schemas/common.ts';

const PairIn = Type.Object({
  code: Type.String({ minLength: 1, maxLength: 32, description: 'the code the owner app showed; case, spaces and dashes do not matter' }),
  name: Type.Optional(ReadableLine({ minLength: 1, maxLength: 100, description: 'used when the owner gave the code no name' })),
  jwk: Type.Optional(Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], { description: 'public JWK: kty EC, crv P-256, x, y; no d' })),
  pubkey: Type.Optional(Type.Union([Type.String({ maxLength: 4096 }), Type.Null()], { description: 'public key, PEM (SPKI), EC P-256' })),
}, { description: 'Exactly one of `jwk` or `pubkey`.' });

const PairOut = Type.Object({
  agent_id: Type.String({ description: 'the new agent id (`ag_`); record it with the key' }),
  name: Type.String(),
  jkt: Type.String({ description: 'RFC 7638 thumbprint of the agent key' }),
});

export async function agentPairRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const { pairing } = s;

  app.post('/api/v1/agents/pair', {
    schema: {
      summary: 'Register an agent key with a pairing code from its owner',
      description: `No credential but the code: the owner made it in the app (POST /api/agents/pairing-codes). The agent is created under that owner as POST /api/agents would create it, with the owner's name for it, else \`name\`, else "New agent"; the owner is told. 400 for a key that is not a public EC P-256 key (the code stays usable) and for an unknown, used or expired code (with \`next_step\`); 409 when the owner has reached the agent limit (the code is used up). At most ${PAIRING.redeemsPerAddress} attempts per client address (an IPv6 client: per /64) and ${PAIRING.redeemsPerNetwork} per IPv6 /48 per ${PAIRING.redeemWindowSec / 60} minutes, then 429 with Retry-After.`,
      tags: ['agent'],
      body: PairIn,
      response: withErrors({ 200: PairOut }, 400, 409, 429),
    },
  }, async (request) => {
    const agent = await pairing.redeem(request.body, request.ip);
    return { agent_id: agent.id, name: agent.name, jkt: agentJkt(agent) };
  });
}
