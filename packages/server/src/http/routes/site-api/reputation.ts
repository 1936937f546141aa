import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { REPORT_KINDS } from '../../../domain/reputation/score.ts';
import type { ReportKind } from '../../../store/ports/index.ts';
import { AgentFlag, AgentParams } from '../../schemas/agents.ts';
import { withErrors } from '../../schemas/common.ts';

const Count = Type.Integer({ minimum: 0 });
const ReputationOut = Type.Object({
  agent_id: Type.String(),
  score: Type.Integer({ minimum: 0, maximum: 100 }),
  flag: AgentFlag(),
  age_days: Type.Integer({ minimum: 0, description: 'full days since the agent was created' }),
  reports: Type.Object(
    Object.fromEntries(REPORT_KINDS.map((kind) => [kind, Count])) as Record<ReportKind, typeof Count>,
    { description: 'how many reporting sites\' latest report is of each kind; every kind is present' },
  ),
  reporting_sites: Type.Integer({ minimum: 0 }),
});

export async function reputationRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/api/v1/agents/:agent_id/reputation', {
    schema: {
      summary: "An agent's reputation",
      description: [
        'score = clamp(0..100, 50 + min(10, floor(age_days / 30)) + the weight of each reporting site\'s latest report);',
        'weights: good +2, policy -3, scraping -3, spam -5, abuse -8, fraud -10. Each site counts once, so one site moves the score by at most 12.',
        'A revoked or removed agent scores 0 with flag `revoked`; otherwise flag is `suspicious` when its owner flagged it so, or when the score is below 30 and at least 3 sites reported; else `ok`.',
        'Public, no credential. Unknown agent: 404.',
      ].join(' '),
      tags: ['site'],
      params: AgentParams,
      response: withErrors({ 200: ReputationOut }, 404),
    },
  }, async (request) => s.reputation.of(request.params.agent_id));
}
