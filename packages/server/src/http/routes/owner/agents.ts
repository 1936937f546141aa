import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AgentOperator, AgentRecord } from '../../../store/ports/index.ts';
import type { Services } from '../../../services.ts';
import { iso } from '../../../clock.ts';
import { AgentFlag, AgentParams } from '../../schemas/agents.ts';
import { ReadableLine, Timestamp, withErrors } from '../../schemas/common.ts';
import { AGENT_LIMITS } from '../../../domain/agents/agents.ts';
import { QUOTAS } from '../../../domain/quotas.ts';
import { passwordManagerState, type PasswordManagerState } from '../../../domain/agents/password-manager.ts';
import { PasswordManagerOut } from '../../schemas/password-manager.ts';

const AgentIn = Type.Object({
  name: ReadableLine({ minLength: 1, maxLength: 100 }),
  pubkey: Type.Optional(Type.Union([Type.String({ maxLength: 4096 }), Type.Null()], { description: 'public key, PEM (SPKI), EC P-256' })),
  jwk: Type.Optional(Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], { description: 'public JWK: kty EC, crv P-256, x, y; no d' })),
}, { description: 'Exactly one of `jwk` or `pubkey`. A key that is not EC P-256, or that carries private parts, is refused with 400.' });

const FlagIn = Type.Object({ flag: AgentFlag() });

const AgentOut = Type.Object({
  id: Type.String({ description: 'agent id (`ag_`)' }),
  name: Type.String(),
  status: Type.Union([Type.Literal('active'), Type.Literal('removed'), Type.Literal('blocked'), Type.Literal('suspended')], { description: '`blocked`: the agent was made by an operator that an admin switched off; it works again when the operator is switched on. `suspended`: an operator\'s agent beyond the limit you set for its connection (the newest beyond it); it works again when you raise the limit (POST /api/connections/{cid}/limit)' }),
  flag: AgentFlag(),
  kind: Type.Union([Type.Literal('agent'), Type.Literal('app')], { description: '`app`: an MCP client you approved in the browser (decisions §28): it has no key, acts only at the resources you approved, and is revoked like an agent' }),
  client_id: Type.Union([Type.String(), Type.Null()], { description: "an app's OAuth client_id (`c_`, `rc_`, or its metadata document URL); null for an agent" }),
  jkt: Type.Union([Type.String(), Type.Null()], { description: 'RFC 7638 thumbprint of the agent key; null for an app' }),
  password_manager: PasswordManagerOut,
  operator: Type.Union([
    Type.Object({
      id: Type.String({ description: 'operator id (`op_`)' }),
      name: Type.String(),
      connection_id: Type.String({ description: 'the connection it was made through (`cn_`; see GET /api/connections)' }),
    }),
    Type.Null(),
  ], { description: 'the operator that made the agent, or null for an agent you added' }),
  created_at: Timestamp,
});

const agentOut = (a: AgentRecord, pm: PasswordManagerState, op: AgentOperator | undefined) => ({
  id: a.id, name: a.name, status: a.status, flag: a.flag, kind: a.kind, client_id: a.clientId, jkt: a.jkt, password_manager: pm,
  operator: op === undefined ? null : { id: op.operatorId, name: op.name, connection_id: op.connectionId },
  created_at: iso(a.createdAt),
});

export async function agentRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.post('/api/agents', {
    schema: {
      summary: 'Create an agent with its public key',
      description: `At most ${AGENT_LIMITS.livePerOwner} live (not removed) agents per owner, counted exactly also across nodes: beyond that 409 (remove an agent first). At most ${AGENT_LIMITS.createsPerHour} creations per owner per hour, then 429 with Retry-After.`,
      tags: ['agents'],
      body: AgentIn,
      response: withErrors({ 200: AgentOut }, 400, 401, 403, 409, 429),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    // An agent the owner adds is never an operator's: its password manager is not restricted.
    return agentOut(await s.agents.create(user.id, request.body, request.ip), 'not_applicable', undefined);
  });

  app.get('/api/agents', {
    schema: {
      summary: "The owner's agents (removed ones are not listed)",
      description: `Oldest first. Not paged: an owner has at most ${AGENT_LIMITS.livePerOwner} live agents, so this list is never longer.`,
      tags: ['agents'],
      response: withErrors({ 200: Type.Array(AgentOut) }, 401),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    const [agents, passwordManagers, operators] = await Promise.all([s.agents.list(user.id), s.store.agents.passwordManagersOfOwner(user.id), s.store.operators.agentOperatorsOfOwner(user.id)]);
    return agents.map((a) => agentOut(a, passwordManagerState(passwordManagers.get(a.id)), operators.get(a.id)));
  });

  app.delete('/api/agents/:agent_id', {
    schema: {
      summary: 'Remove an agent',
      description: 'Its site access is revoked, its open requests are cancelled, its key list becomes empty and the revocation sequence advances.',
      tags: ['agents'],
      params: AgentParams,
      response: withErrors({ 200: Type.Object({ ok: Type.Boolean() }) }, 401, 403, 404),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    await s.agents.remove(user.id, request.params.agent_id, request.ip);
    return { ok: true };
  });

  app.post('/api/agents/:agent_id/flag', {
    schema: {
      summary: "Set an agent's global flag",
      description: `\`revoked\` blocks the agent everywhere; \`ok\` unblocks it. Every change advances the revocation sequence. An unblocked agent stays in the revocation snapshot as \`revoked\` for 600 s, so passes minted before the block stay refused by local verifiers. At most ${QUOTAS.flagChangesPerAgentPerHour} flag calls per agent per hour (a call that sets the flag it already has counts too): beyond that **429** with \`retry_after\` and \`quota: "flag_changes_per_hour"\`.`,
      tags: ['agents'],
      params: AgentParams,
      body: FlagIn,
      response: withErrors({ 200: AgentOut }, 401, 403, 404, 429),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    const agent = await s.agents.setFlag(user.id, request.params.agent_id, request.body.flag, request.ip);
    return agentOut(agent, passwordManagerState(await s.store.agents.passwordManager(agent.id)), (await s.store.operators.agentOperatorsOfOwner(user.id)).get(agent.id));
  });
}
