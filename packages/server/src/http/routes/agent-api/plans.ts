import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { withErrors } from '../../schemas/common.ts';
import { agentBodyChecks } from '../../body-checks.ts';
import { AgentOnlyIn, PlanCreatedOut, PlanIn, PlanOut, PlanParams, PlanResultIn } from '../../schemas/plans.ts';

const SUBMIT = `The agent submits a scheduled task's plan (decisions §20). The owner gets one card (a request of kind \`plan\`,
\`txn_id\`) to pre-approve all or some steps with a passkey; money and security steps are never pre-approved, and an
unanswered card pre-approves nothing. At run time an agent approval passes without a card only when it matches a
pre-approved step exactly (same agent, inside the window, host, button words, path rule, text digests, uses left,
\`after\` steps done).

- **400** a rule of PlanIn broken: the detail names the step and the rule (title 1-80; start from now − 60 s to now +
  30 days; window 60 s to 24 h; 1 to 20 steps; ids \`[a-z0-9_-]{1,24}\`, unique; https urls; path "/" + printable
  ASCII ≤ 300, \`*\` only at the end; button 1-80; at most 4 texts of 1-10000 characters; \`after\` earlier ids only;
  uses 1-5; publish buttons need \`texts\`; delete and unrecognised buttons need \`path\`).
- **401** invalid \`agent_jwt\`. **403** agent revoked. **422** a field missing or of the wrong type.
- **429** more than 20 plans per agent per hour, or the owner has too many open requests.`;

export async function agentPlanRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.post('/api/v1/plans', {
    config: { bodyChecks: agentBodyChecks('agent_id') },
    schema: { summary: 'Submit a plan for the owner to pre-approve', description: SUBMIT, tags: ['agent'], body: PlanIn, response: withErrors({ 200: PlanCreatedOut }, 400, 401, 403, 429) },
  }, async (request) => {
    const { agent_id, agent_jwt, ...plan } = request.body;
    const created = await s.plans.submit({ agentId: agent_id, agentJwt: agent_jwt, plan, ip: request.ip });
    return { plan_id: created.planId, txn_id: created.txnId, status: created.status, expires_in: created.expiresIn };
  });

  app.post('/api/v1/plans/:plan_id/status', {
    config: { bodyChecks: agentBodyChecks('agent_id') },
    schema: {
      summary: 'A plan as the agent sees it',
      description: 'Each step pre-approved or asking, its uses left and what has happened. A POST so the agent\'s token stays out of URLs. **401** invalid `agent_jwt`; **404** unknown plan or another agent\'s.',
      tags: ['agent'], params: PlanParams, body: AgentOnlyIn, response: withErrors({ 200: PlanOut }, 401, 403, 404),
    },
  }, async (request) => s.plans.status({ agentId: request.body.agent_id, agentJwt: request.body.agent_jwt, planId: request.params.plan_id }));

  app.post('/api/v1/plans/result', {
    config: { bodyChecks: agentBodyChecks('agent_id') },
    schema: {
      summary: 'What a pre-approved plan step did',
      description: 'The vault reports the result of the click that a plan step covered (`txn_id`: that agent approval), so steps `after` it know whether they may run (only after `done`). Answers the plan. **401** invalid `agent_jwt`; **404** no step of this agent\'s plans was used by that request.',
      tags: ['agent'], body: PlanResultIn, response: withErrors({ 200: PlanOut }, 401, 403, 404),
    },
  }, async (request) => {
    const b = request.body;
    return s.plans.result({ agentId: b.agent_id, agentJwt: b.agent_jwt, txnId: b.txn_id, result: b.result, ip: request.ip });
  });
}
