import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { agentBodyChecks } from '../../body-checks.ts';
import { ReadableLine, withErrors } from '../../schemas/common.ts';
import { TAKEOVER_TTL_SEC, TAKEOVERS_PER_HOUR } from '../../../domain/takeovers/takeovers.ts';
import { TakeoverReportIn } from '../../schemas/takeovers.ts';

const TakeoverIn = Type.Object({
  agent_id: Type.String({ minLength: 1, maxLength: 64 }),
  agent_jwt: Type.String({ minLength: 1, maxLength: 8192 }),
  url: Type.String({ minLength: 8, maxLength: 2000, pattern: '^https?://[^\\s]+$', description: 'the page the agent is on (http or https)' }),
  reason: ReadableLine({ maxLength: 200, description: 'why the agent needs its owner, shown on the card' }),
});

export async function agentTakeoverRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  app.post('/api/v1/takeover', {
    config: { bodyChecks: agentBodyChecks('agent_id') },
    schema: {
      summary: 'Ask the owner to take over the browser',
      description: `Opens a take-over session of at most ${TAKEOVER_TTL_SEC} s: the owner gets a \`takeover\` push and card opening \`/app/takeover/{takeover_id}\`. The agent then connects its WebSocket to \`/api/v1/takeover/{takeover_id}/agent\` with \`Authorization: Bearer <agent_token>\` (never in the URL) and streams frames. One open take-over per agent (409). ${TAKEOVERS_PER_HOUR} requests per agent per hour, then 429. 401 invalid agent JWT; 403 agent revoked.`,
      tags: ['agent'],
      body: TakeoverIn,
      response: withErrors({ 200: Type.Object({
        takeover_id: Type.String({ description: 'the session id (`tk_...`)' }),
        agent_token: Type.String({ description: 'the relay token for the agent\'s WebSocket; shown once, stored hashed' }),
        expires_in: Type.Integer({ description: 'seconds until the session ends by itself' }),
      }) }, 401, 403, 409, 429),
    },
  }, async (request) => {
    const { agent_id, agent_jwt, url, reason } = request.body;
    const agent = await s.agents.verifyJwt(agent_jwt, agent_id);
    const t = await s.takeovers.request(agent, { url, reason }, request.ip);
    return { takeover_id: t.takeoverId, agent_token: t.agentToken, expires_in: t.expiresIn };
  });

  app.post('/api/v1/takeover/report', {
    config: { bodyChecks: agentBodyChecks('agent_id') },
    schema: {
      summary: 'Report a site where a take-over failed',
      description: 'The agent reports what went wrong (`kind`) on `site`; the owner sees the reports with `GET /api/v1/takeover/reports` and in Activity (`takeover.reported`). 60 reports per agent per hour, then 429. 401 invalid agent JWT; 403 agent revoked.',
      tags: ['agent'],
      body: TakeoverReportIn,
      response: withErrors({ 200: Type.Object({ id: Type.String({ description: 'the report id (`tkr_...`)' }) }) }, 401, 403, 429),
    },
  }, async (request) => {
    const { agent_id, agent_jwt, site, kind, detail, url } = request.body;
    const agent = await s.agents.verifyJwt(agent_jwt, agent_id);
    const id = await s.takeovers.report(agent, { site, kind, detail: detail ?? null, url: url ?? null }, request.ip);
    return { id };
  });
}
