import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { AgentParams } from '../../schemas/agents.ts';
import { withErrors } from '../../schemas/common.ts';
import { PasswordManagerOut } from '../../schemas/password-manager.ts';
import { switchPasswordManager } from '../../../domain/agents/password-manager.ts';

const PasswordManagerIn = Type.Object({ enabled: Type.Boolean({ description: 'true lets the agent list, fill and save secrets; false stops it' }) }, { additionalProperties: false });

export async function passwordManagerRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const deps = { store: s.store, agents: s.agents, activity: s.activity };

  app.post('/api/agents/:agent_id/password-manager', {
    schema: {
      summary: 'Allow or stop password-manager filling for an agent whose browser runs on its operator\'s computers',
      description: 'Decisions §17. Off by default for such agents: while off, the agent status (`GET /api/v1/agent-status`) says `password_manager: "off"` and the agent SDK refuses `listSecrets`, `fillSecret` and `saveSecret` (the agent asks for a take-over instead). Each call leaves an `agent.password_manager` record in Activity. Owner session only: agent and operator credentials are refused (401). **400** the agent\'s browser does not run on its operator\'s computers (an ordinary agent, or `browser: "user"`); **404** not your agent.',
      tags: ['agents'],
      params: AgentParams,
      body: PasswordManagerIn,
      response: withErrors({ 200: Type.Object({ agent_id: Type.String(), password_manager: PasswordManagerOut }) }, 400, 401, 403, 404),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    return switchPasswordManager(deps, user.id, request.params.agent_id, request.body.enabled, request.ip);
  });
}
