import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { iso } from '../../../clock.ts';
import { AgentParams } from '../../schemas/agents.ts';
import { Timestamp, withErrors } from '../../schemas/common.ts';
import { STATUS_SITES_KEPT } from '../../../domain/agents/agent-status.ts';

const StatusOut = Type.Object({
  site: Type.String({ description: 'the site the status is about; empty = general' }),
  status: Type.String({ description: 'as the agent wrote it' }),
  reported_at: Timestamp,
});

export async function agentStatusListRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/api/agents/:agent_id/statuses', {
    schema: {
      summary: 'The latest status an agent reported, per site',
      description: `Owner only. One entry per site (empty site = the general status), newest first, as reported with \`POST /api/v1/agent-status\`. Capped: the latest status of the agent's ${STATUS_SITES_KEPT} most recently reported sites is kept (a report about a new site beyond them drops the oldest), so the list is never longer. Another owner's or an unknown agent: 404.`,
      tags: ['agents'],
      params: AgentParams,
      response: withErrors({ 200: Type.Array(StatusOut) }, 401, 404),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    const agent = await s.agents.owned(user.id, request.params.agent_id);
    return (await s.agentStatuses.latest(agent.id)).map((r) => ({ site: r.site, status: r.status, reported_at: iso(r.createdAt) }));
  });
}
