import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { iso } from '../../../clock.ts';
import type { ConnectionAgent } from '../../../store/ports/index.ts';
import { AGENT_LIMITS } from '../../../domain/agents/agents.ts';
import { OPERATOR_LIST_CAP } from '../../../domain/operators/operator-agents.ts';
import { requireOperator } from '../../auth/operator.ts';
import { AgentParams } from '../../schemas/agents.ts';
import { IdParam, ReadableLine, Timestamp, withErrors } from '../../schemas/common.ts';
import { AGENT_STATUS_TEXT, ConnectionStatusOut } from './connection-out.ts';

const AgentIn = Type.Object({
  connection_id: Type.String({ minLength: 1, maxLength: 64, description: 'the connection (`cn_`) of the person the agent is for, as POST /api/v1/operator/token answered it' }),
  name: ReadableLine({ minLength: 1, maxLength: 100, description: 'the agent\'s name; the person sees it followed by " (via <your operator name>)", 100 characters at most in all' }),
  jwk: Type.Object({}, { additionalProperties: true, description: 'the agent\'s public key: `kty` `EC`, `crv` `P-256`, `x`, `y`; a key with private parts (`d`) or of another kind is refused with 400' }),
}, { additionalProperties: false });

const BROWSER = Type.Union([Type.Literal('operator'), Type.Literal('user')], { description: 'where the agent\'s browser runs: your registration\'s `browser`' });

const CreatedOut = Type.Object({
  agent_id: Type.String({ description: '`ag_...`' }),
  name: Type.String({ description: '"<name> (via <your operator name>)"' }),
  browser: BROWSER,
});

const AgentOut = Type.Object({
  agent_id: Type.String(),
  name: Type.String(),
  browser: BROWSER,
  connection_id: Type.String(),
  status: ConnectionStatusOut(AGENT_STATUS_TEXT),
  created_at: Timestamp,
});

const ListQuery = Type.Object({
  connection_id: Type.String({ maxLength: 64, default: '', description: 'only this connection\'s agents (404 when it is not yours); empty: all of yours' }),
}, { additionalProperties: false });

const AUTH = 'HTTP Basic (`op_id:secret`): 401 (with WWW-Authenticate) for missing or wrong credentials, 403 for an operator an admin has not switched on.';

const agentOut = (a: ConnectionAgent) => ({ agent_id: a.id, name: a.name, browser: a.browser ?? 'operator', connection_id: a.connectionId, status: a.status, created_at: iso(a.createdAt) });

/** The operator API's agents (decisions §17). */
export async function operatorAgentRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.post('/api/v1/operator/agents', {
    schema: {
      summary: 'Create an agent for a person who connected you',
      description: `The agent belongs to the person of \`connection_id\`; they are told at once (a push and an inbox notice) and can remove it. 403 when \`connection_id\` is not one of your live connections (ended, unknown, or not yours: the same answer) or when its live agents already reach its \`max_agents\` (counted exactly, also across racing calls; the person sets the limit). 409 when the person has ${AGENT_LIMITS.livePerOwner} agents in all. 429 past ${AGENT_LIMITS.createsPerHour} new agents per person per hour. 400 for a key that is not a public EC P-256 JWK, or a name too long with its suffix. ${AUTH}`,
      tags: ['operators'],
      body: AgentIn,
      response: withErrors({ 200: CreatedOut }, 400, 401, 403, 409, 429),
    },
  }, async (request) => {
    const operator = await requireOperator(s.operators, request);
    const b = request.body;
    const agent = await s.operatorAgents.create(operator, { connectionId: b.connection_id, name: b.name, jwk: b.jwk }, request.ip);
    return { agent_id: agent.id, name: agent.name, browser: operator.browser };
  });

  app.get('/api/v1/operator/agents', {
    schema: {
      summary: 'Your agents',
      description: `The agents you made, oldest first, removed ones too (at most ${OPERATOR_LIST_CAP}); never anyone else's. ${AUTH}`,
      tags: ['operators'],
      querystring: ListQuery,
      response: withErrors({ 200: Type.Array(AgentOut) }, 401, 403, 404),
    },
  }, async (request) => {
    const operator = await requireOperator(s.operators, request);
    const connectionId = request.query.connection_id === '' ? null : request.query.connection_id;
    return (await s.operatorAgents.list(operator, connectionId)).map(agentOut);
  });

  app.delete('/api/v1/operator/agents/:agent_id', {
    schema: {
      summary: 'Remove one of your agents',
      description: `Removed as its owner would remove it: its site access is revoked, its open requests are cancelled, its key list becomes empty and sites that signed it in are told by back-channel logout. 404 for an agent that is not yours, unknown or already removed. ${AUTH}`,
      tags: ['operators'],
      params: AgentParams,
      response: withErrors({ 200: Type.Object({ ok: Type.Literal(true) }) }, 401, 403, 404),
    },
  }, async (request) => {
    const operator = await requireOperator(s.operators, request);
    await s.operatorAgents.remove(operator, request.params.agent_id, request.ip);
    return { ok: true as const };
  });
}

const ConnectionOut = Type.Object({
  connection_id: Type.String({ description: '`cn_...`' }),
  sub: Type.String({ description: 'the person as your operator knows them (pairwise)' }),
  max_agents: Type.Integer({ description: 'how many agents the person lets you have through it' }),
  status: ConnectionStatusOut('`active`, or `removed` once ended (by the person, by you, or because its one-time code was used twice)'),
  created_at: Timestamp,
  agents: Type.Integer({ description: 'its live (not removed) agents' }),
});

/** The operator API's connections (decisions §17). */
export async function operatorConnectionRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/api/v1/operator/connections', {
    schema: {
      summary: 'Your connections',
      description: `The people who connected you, newest first, ended connections too (at most ${OPERATOR_LIST_CAP}): the pairwise \`sub\`, the limit and how many live agents each has. Nothing else about the person (no email, phone, other agents, grants, approvals or activity). ${AUTH}`,
      tags: ['operators'],
      response: withErrors({ 200: Type.Array(ConnectionOut) }, 401, 403),
    },
  }, async (request) => {
    const operator = await requireOperator(s.operators, request);
    return (await s.operatorAgents.connections(operator)).map(({ connection: c, agents }) => ({
      connection_id: c.id, sub: c.sub, max_agents: c.maxAgents, status: c.status, created_at: iso(c.createdAt), agents,
    }));
  });

  app.delete('/api/v1/operator/connections/:connection_id', {
    schema: {
      summary: 'End a connection',
      description: `Ends it (status \`removed\`) and removes every agent you made through it, as the person removing them would (site access revoked, open requests cancelled, back-channel logout to sites that signed them in). It stays ended; the person must connect you again for a new one. Ending an ended connection changes nothing. 404 for a connection that is not yours. ${AUTH}`,
      tags: ['operators'],
      params: IdParam('connection_id', 'cn'),
      response: withErrors({ 200: Type.Object({ ok: Type.Literal(true), status: ConnectionStatusOut('`removed`') }) }, 401, 403, 404),
    },
  }, async (request) => {
    const operator = await requireOperator(s.operators, request);
    const c = await s.operatorAgents.endConnection(operator, request.params.connection_id, request.ip);
    return { ok: true as const, status: c.status };
  });
}
