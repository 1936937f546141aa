import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { requireOperator } from '../../auth/operator.ts';
import { withErrors } from '../../schemas/common.ts';

const TokenIn = Type.Object({
  code: Type.String({ minLength: 1, maxLength: 500, description: 'the `code` your redirect URI received' }),
  code_verifier: Type.String({ minLength: 1, maxLength: 200, description: 'the PKCE verifier whose S256 was the `code_challenge` (43 to 128 characters)' }),
  redirect_uri: Type.String({ minLength: 1, maxLength: 2000, description: 'the redirect URI of the consent, exactly' }),
}, { additionalProperties: false });

const TokenOut = Type.Object({
  connection_id: Type.String({ description: '`cn_...`' }),
  sub: Type.String({ description: 'the person as your operator knows them: the same for every connection of theirs to you, different at every other operator' }),
  max_agents: Type.Integer({ description: 'how many agents you may add for this person (they can change it)' }),
});

/** The operator's code exchange (decisions §17): HTTP Basic, one code, once, within 60 s. */
export async function operatorTokenRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.post('/api/v1/operator/token', {
    schema: {
      summary: 'Exchange a consent code for the connection',
      description: 'HTTP Basic (`op_id:secret`). The code is single-use and lasts 60 s; it must come with the same redirect_uri and a code_verifier whose S256 is the consent\'s code_challenge. Any mismatch spends the code (400 `invalid_grant`). Presenting a code that was already exchanged ends the connection it gave (the code may have been copied): 400 `invalid_grant`. A person who consents again while connected gives you the same live connection. 401 (with WWW-Authenticate) for missing or wrong credentials, 403 for an operator not switched on.',
      tags: ['operators'],
      body: TokenIn,
      response: withErrors({ 200: TokenOut }, 400, 401, 403),
    },
  }, async (request, reply) => {
    const operator = await requireOperator(s.operators, request);
    const b = request.body;
    const connection = await s.consent.exchange(operator, { code: b.code, codeVerifier: b.code_verifier, redirectUri: b.redirect_uri }, request.ip);
    reply.header('cache-control', 'no-store');
    return { connection_id: connection.id, sub: connection.sub, max_agents: connection.maxAgents };
  });
}
