import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { withErrors } from '../../schemas/common.ts';
import { OwnerPlanOut, PlanOut, PlanParams } from '../../schemas/plans.ts';

const PlansQuery = Type.Object({
  agent_id: Type.String({ maxLength: 64, default: '', description: 'one agent\'s plans (`ag_`); empty: all the owner\'s agents' }),
});

export async function ownerPlanRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/api/plans', {
    schema: {
      summary: "The owner's plans",
      description: 'Plans ending in the last 7 days or later, latest start first, at most 50, with each step\'s state and whether it is pre-approved. **404** unknown agent or another owner\'s.',
      tags: ['plans'], querystring: PlansQuery, response: withErrors({ 200: Type.Array(OwnerPlanOut) }, 401, 404),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    return s.plans.list(user.id, request.query.agent_id);
  });

  app.post('/api/plans/:plan_id/withdraw', {
    schema: {
      summary: 'Withdraw a plan',
      description: 'Ends a pending or approved plan: no step of it pre-approves anything any more, and its card, if still open, is closed. **404** unknown plan or another owner\'s; **409** already denied, withdrawn or expired.',
      tags: ['plans'], params: PlanParams, response: withErrors({ 200: PlanOut }, 401, 403, 404, 409),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    return s.plans.withdraw(user.id, request.params.plan_id, request.ip);
  });
}
