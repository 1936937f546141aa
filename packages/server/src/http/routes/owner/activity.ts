import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { iso } from '../../../clock.ts';
import { agentNames } from '../../../domain/agents/agent-names.ts';
import { Timestamp, withErrors } from '../../schemas/common.ts';

const ActivityQuery = Type.Object({
  before: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0, description: 'only records with a smaller `seq`; 0 (default) = from the newest. Pass the previous page\'s `next_before`.' }),
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
  agent: Type.String({ maxLength: 64, default: '', description: 'only this agent id; empty = any' }),
  site: Type.String({ maxLength: 255, default: '', description: 'only this site; empty = any' }),
  action: Type.String({ maxLength: 64, default: '', description: 'only this action, for example `agent.note`; empty = any' }),
});

const ActivityItem = Type.Object({
  seq: Type.Integer({ description: "the owner's sequence number: 1, 2, 3... without gaps (a missing number is a missing record); larger is newer" }),
  action: Type.String({ description: 'for example request.approved, pass.issued, grant.revoked, agent.created, agent.removed, agent.flagged, agent.note, agent.status, report.received' }),
  agent_id: Type.Union([Type.String(), Type.Null()]),
  agent_name: Type.Union([Type.String(), Type.Null()], { description: "the agent's display name (also for removed agents)" }),
  site: Type.Union([Type.String(), Type.Null()]),
  detail: Type.Record(Type.String(), Type.Unknown()),
  created_at: Timestamp,
});
const ActivityPage = Type.Object({
  items: Type.Array(ActivityItem, { description: 'newest first' }),
  next_before: Type.Union([Type.Integer(), Type.Null()], { description: '`seq` of the last item when more records follow (pass it as `before`); null on the last page' }),
});

export async function activityRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/api/activity', {
    schema: {
      summary: "The owner's audit trail, newest first, paged by sequence number",
      description: 'Filters combine (all must match) and match exactly. Page with `before` = the previous page\'s `next_before` until it is null. Every filter and every combination of them reads an index of its own, so a page costs about the same whatever the size of the trail and however rarely the filter matches.',
      tags: ['owner'],
      querystring: ActivityQuery,
      response: withErrors({ 200: ActivityPage }, 401),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    const { before, limit, agent, site, action } = request.query;
    // One record more than asked tells whether another page follows.
    const [rows, names] = await Promise.all([
      s.activity.list(user.id, { before, limit: limit + 1, agentId: agent || undefined, site: site || undefined, action: action || undefined }),
      agentNames(s.store.agents, user.id),
    ]);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      items: page.map((r) => ({
        seq: r.seq,
        action: r.action,
        agent_id: r.agentId,
        agent_name: r.agentId === null ? null : (names.get(r.agentId) ?? null),
        site: r.site,
        detail: r.detail,
        created_at: iso(r.createdAt),
      })),
      next_before: rows.length > limit && last ? last.seq : null,
    };
  });
}
