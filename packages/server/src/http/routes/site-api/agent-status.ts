import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { AgentFlag, AgentParams } from '../../schemas/agents.ts';
import { withErrors } from '../../schemas/common.ts';

export const AgentStatusOut = Type.Object({
  agent_id: Type.String(),
  global_flag: AgentFlag({ description: '`revoked` when the owner blocked or removed the agent (a removed agent has no keys left)' }),
  revoked_sites: Type.Array(Type.String(), { description: 'sites whose grant for this agent was revoked and not approved again since, sorted' }),
  jwks_url: Type.String({ description: 'where the keys that sign passes, step-up tokens and revocation lists are published' }),
});

export async function siteAgentStatusRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/api/v1/agents/:agent_id/status', {
    schema: {
      summary: "An agent's status: global flag and revoked sites",
      description: 'Public, no credential. Unknown agent: 404.',
      tags: ['site'],
      params: AgentParams,
      response: withErrors({ 200: AgentStatusOut }, 404),
    },
  }, async (request) => s.agentStatuses.view(request.params.agent_id));
}
