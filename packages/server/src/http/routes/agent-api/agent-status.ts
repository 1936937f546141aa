import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { agentBodyChecks } from '../../body-checks.ts';
import { STATUS_REPORTS_PER_MINUTE } from '../../../domain/agents/agent-status.ts';
import { ReadableText, withErrors } from '../../schemas/common.ts';
import { AgentStatusOut } from '../site-api/agent-status.ts';
import { PasswordManagerOut } from '../../schemas/password-manager.ts';

const AgentId = Type.String({ minLength: 1, maxLength: 64, description: 'agent id (`ag_`)' });
const AgentStatusReport = Type.Object({
  agent_id: AgentId,
  agent_jwt: Type.String({ minLength: 1, maxLength: 8192 }),
  status: ReadableText({ minLength: 1, maxLength: 500, description: 'free text shown to the owner as written (no invisible or control characters but newlines and tabs)' }),
  site: Type.Optional(Type.String({ maxLength: 255, default: '', description: 'the site the status is about; empty (the default) = the agent\'s general status' })),
});

/** The public agent status plus what only the agent reads: whether it may use the password manager. */
const AgentSelfStatusOut = Type.Composite([AgentStatusOut, Type.Object({ password_manager: PasswordManagerOut })]);

export async function agentStatusRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/api/v1/agent-status', {
    schema: {
      summary: 'The agent checks whether it is still authorized',
      description: 'Authenticated by the agent JWT in header `X-Agent-JWT`. Answers the agent status object (as `GET /api/v1/agents/{agent_id}/status`) with `password_manager` (decisions §17): `off` while the agent\'s browser runs on its operator\'s computers and its owner has not turned the password manager on. 401: missing or invalid agent JWT (with `next_step`); 403: the agent was revoked or removed by its owner.',
      tags: ['agent'],
      querystring: Type.Object({ agent_id: AgentId }),
      headers: Type.Object({ 'x-agent-jwt': Type.Optional(Type.String({ description: 'agent JWT' })) }),
      response: withErrors({ 200: AgentSelfStatusOut }, 401, 403),
    },
  }, async (request) => {
    const agent = await s.agents.verifyJwt(request.headers['x-agent-jwt'], request.query.agent_id);
    return s.agentStatuses.selfViewOf(agent);
  });

  app.post('/api/v1/agent-status', {
    config: { bodyChecks: agentBodyChecks('agent_id') },
    schema: {
      summary: 'The agent reports its current status for the owner\'s dashboard',
      description: `The latest status per site is kept (\`site\` empty = general) and listed to the owner at \`GET /api/agents/{agent_id}/statuses\`; each report leaves an \`agent.status\` record in Activity. ${STATUS_REPORTS_PER_MINUTE} per agent per minute, then 429. 401 invalid agent JWT; 403 agent revoked.`,
      tags: ['agent'],
      body: AgentStatusReport,
      response: withErrors({ 200: Type.Object({ ok: Type.Literal(true) }) }, 401, 403, 429),
    },
  }, async (request) => {
    const { agent_id, agent_jwt, status, site } = request.body;
    const agent = await s.agents.verifyJwt(agent_jwt, agent_id);
    await s.agentStatuses.report(agent, { site: site ?? '', status, ip: request.ip });
    return { ok: true as const };
  });
}
