import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { isoOrNull } from '../../../clock.ts';
import { withErrors } from '../../schemas/common.ts';
import { agentBodyChecks } from '../../body-checks.ts';

const TokenIn = Type.Object({
  agent_id: Type.String({ minLength: 1, maxLength: 64 }),
  site: Type.String({ minLength: 1, maxLength: 253, description: 'site id, normally its public host name' }),
  agent_jwt: Type.String({ minLength: 1, maxLength: 8192 }),
  refresh_token: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'the `refresh_token` of the latest token response; single use' })),
});

const TokenOut = Type.Object({
  access_token: Type.String({ description: 'the pass: ES256 JWT, header typ `at+jwt`, bound to the agent key (`cnf.dpop`, `cnf.jkt`)' }),
  token_type: Type.Literal('DPoP'),
  expires_in: Type.Integer({ description: 'seconds: 600, or less when the grant expires sooner' }),
  refresh_token: Type.String({ description: 'opaque, single use; replaces every earlier one' }),
  scope: Type.Array(Type.String()),
  grant_expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  grant_uses_left: Type.Union([Type.Integer(), Type.Null()], { description: 'after this pass; null = unlimited' }),
});

const DESCRIPTION = `Gets or renews a pass for one site. Every success spends one use of the grant (when it has a limit)
and returns a new \`refresh_token\`, invalidating the previous one, in one atomic step: of concurrent calls with the same
refresh token exactly one succeeds.

- Without \`refresh_token\`: only within 3600 s of the owner's approval; later **401** (\`next_step\`: send the refresh token).
- **401** \`refresh token already used or invalid\`: the refresh token is not the grant's current one.
- **401** invalid \`agent_jwt\`. **403** \`agent revoked by its owner\`.
- **403** \`no approved access for this site\` (never approved, revoked, or replaced); **403** when the grant has
  expired or has no uses left. Each 403/401 carries \`next_step\`.
- **429** more than 60 calls per agent and site in 60 s.`;

export async function tokenRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.post('/api/v1/token', {
    config: { bodyChecks: agentBodyChecks('agent_id') },
    schema: { summary: 'Get or renew a pass', description: DESCRIPTION, tags: ['agent'], body: TokenIn, response: withErrors({ 200: TokenOut }, 401, 403, 429) },
  }, async (request) => {
    const b = request.body;
    const pass = await s.passes.issue({ agentId: b.agent_id, site: b.site, agentJwt: b.agent_jwt, refreshToken: b.refresh_token, ip: request.ip });
    s.metrics.passIssued();
    return {
      access_token: pass.accessToken,
      token_type: 'DPoP' as const,
      expires_in: pass.expiresIn,
      refresh_token: pass.refreshToken,
      scope: pass.scope,
      grant_expires_at: isoOrNull(pass.grantExpiresAt),
      grant_uses_left: pass.grantUsesLeft,
    };
  });
}
