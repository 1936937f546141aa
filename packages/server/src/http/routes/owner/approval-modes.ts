import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { AgentParams } from '../../schemas/agents.ts';
import { withErrors } from '../../schemas/common.ts';
import { getApprovalModes, setApprovalMode } from '../../../domain/modes/approval-modes.ts';

const Mode = Type.Union([Type.Literal('ask'), Type.Literal('smart'), Type.Literal('allow')]);
const PauseScope = Type.Union([Type.Literal('domain'), Type.Literal('host')], { description: 'what a denial pauses for an hour under `smart`: the whole domain (default) or the host' });

const ApprovalModeIn = Type.Object({
  site: Type.String({ maxLength: 1000, description: 'a host name, or `*` for the agent\'s default' }),
  mode: Type.Union([Mode, Type.Literal('off'), Type.Null()], { description: '`off` is read as `allow`; `null` removes the site\'s row' }),
  hourly_limit: Type.Optional(Type.Integer({ description: 'automatic approvals per hour, 1 to 200 (default 20)' })),
  pause_scope: Type.Optional(PauseScope),
});

const Row = Type.Object({ mode: Mode, hourly_limit: Type.Integer() });
const ApprovalModesOut = Type.Object({
  default: Row,
  sites: Type.Record(Type.String(), Row),
  pause_scope: PauseScope,
});

const DESCRIPTION = `Approval modes of one of the owner's agents (decisions §19). They decide agent approvals
(POST /api/v1/agent-approval) at filing time: \`ask\` always shows a card; \`allow\` approves at once except money and
security actions; \`smart\` approves at once only low actions (save, next page, add to cart, ...), and asks when the
form posts to another host, within an hour after you denied an agent approval on that site (domain or host:
\`pause_scope\`), or past \`hourly_limit\` automatic approvals in the hour (which binds \`allow\` too). Lookup: the exact
host, then its parent domains, then \`*\`, then ask/20. Modes never approve step-ups, sign-ins, CIBA requests or plans.
Owner session only: agent credentials are refused (401). 404 for an agent that is not yours.`;

export async function approvalModeRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const deps = { store: s.store, agents: s.agents, activity: s.activity };

  app.get('/api/agents/:agent_id/approval-modes', {
    schema: { summary: "An agent's approval modes", description: DESCRIPTION, tags: ['agents'], params: AgentParams, response: withErrors({ 200: ApprovalModesOut }, 401, 403, 404) },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    return getApprovalModes(deps, user.id, request.params.agent_id);
  });

  app.post('/api/agents/:agent_id/approval-modes', {
    schema: {
      summary: "Set or remove one of an agent's approval modes",
      description: `${DESCRIPTION}\n\n- **400** invalid \`site\`, \`allow\` for \`*\`, \`hourly_limit\` outside 1-200. Answers the modes as GET does.`,
      tags: ['agents'],
      params: AgentParams,
      body: ApprovalModeIn,
      response: withErrors({ 200: ApprovalModesOut }, 400, 401, 403, 404),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    return setApprovalMode(deps, user.id, request.params.agent_id, request.body, request.ip);
  });
}
