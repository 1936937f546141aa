import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { iso } from '../../../clock.ts';
import { IdParam, withErrors } from '../../schemas/common.ts';
import { TakeoverOut, TakeoverReportOut } from '../../schemas/takeovers.ts';
import { REPORTS_LISTED } from '../../../domain/takeovers/takeovers.ts';
import type { TakeoverRecord } from '../../../store/ports/index.ts';

const SidParams = IdParam('sid', 'tk');

const out = (t: TakeoverRecord) => ({ id: t.id, agent_id: t.agentId, url: t.url, reason: t.reason, created_at: iso(t.createdAt), expires_at: iso(t.expiresAt) });

export async function takeoverRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/api/takeover/active', {
    schema: {
      summary: 'Open take-overs',
      description: 'Owner only. The take-overs the owner\'s agents asked for that are still open (at most 10 minutes each), newest first; each opens at `/app/takeover/{id}`.',
      tags: ['takeovers'],
      response: withErrors({ 200: Type.Array(TakeoverOut) }, 401),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    return (await s.takeovers.active(user.id)).map(out);
  });

  app.post('/api/takeover/:sid/cancel', {
    schema: {
      summary: 'Cancel a take-over',
      description: 'Owner only. Ends the open take-over: both sockets get `{t:"cancelled"}` and close; recorded in Activity (`takeover.ended`). Another owner\'s, an ended or an unknown take-over: 404.',
      tags: ['takeovers'],
      params: SidParams,
      response: withErrors({ 200: Type.Object({ ok: Type.Literal(true) }) }, 401, 403, 404),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    await s.takeovers.cancel(user.id, request.params.sid, request.ip);
    return { ok: true as const };
  });

  app.get('/api/v1/takeover/reports', {
    schema: {
      summary: 'Take-over problems the agents reported',
      description: `Owner only (session). The reports of the owner's agents (\`POST /api/v1/takeover/report\`), newest first, at most ${REPORTS_LISTED}.`,
      tags: ['takeovers'],
      response: withErrors({ 200: Type.Array(TakeoverReportOut) }, 401),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    return (await s.takeovers.reports(user.id)).map((r) => ({ id: r.id, agent_id: r.agentId, site: r.site, kind: r.kind, detail: r.detail, url: r.url, created_at: iso(r.createdAt) }));
  });
}
