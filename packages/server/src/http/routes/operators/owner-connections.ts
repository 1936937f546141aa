import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { MAX_AGENTS_RANGE, OWNER_CONNECTIONS_CAP } from '../../../domain/operators/connection-lifecycle.ts';
import { IdParam, withErrors } from '../../schemas/common.ts';
import { OwnerConnectionOut, ownerConnectionOut } from './connection-out.ts';

const Cid = IdParam('cid', 'cn');
const LimitIn = Type.Object({
  max_agents: Type.Integer({ minimum: MAX_AGENTS_RANGE.min, maximum: MAX_AGENTS_RANGE.max, description: `how many agents the operator may have for you, ${MAX_AGENTS_RANGE.min} to ${MAX_AGENTS_RANGE.max}` }),
}, { additionalProperties: false });

const AUTH = '401 when not signed in (operator credentials are not a sign-in), 403 for a cookie request from another origin.';
const NOT_FOUND = '404 for an unknown id or another person\'s connection.';
const ENDS = 'Every agent the operator made through it is removed as `DELETE /api/agents/{agent_id}` removes one: its site access is revoked (the revocation sequence advances and the revocation list names it), its open requests are cancelled, its key list becomes empty, and sites that signed it in are told by back-channel logout.';

/** The person's side of operator connections (decisions §17): list, disconnect, agent limit. */
export async function ownerConnectionRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/api/connections', {
    schema: {
      summary: 'Your operator connections',
      description: `The operators you connected, newest first, ended connections too (at most ${OWNER_CONNECTIONS_CAP}), each with its agent limit and the agents it made. ${AUTH}`,
      tags: ['operators'],
      response: withErrors({ 200: Type.Array(OwnerConnectionOut) }, 401),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    return (await s.connections.listForOwner(user.id)).map(ownerConnectionOut);
  });

  app.post('/api/connections/:cid/disconnect', {
    schema: {
      summary: 'Disconnect an operator',
      description: `Ends the connection (status \`removed\`); it stays ended, and connecting the operator again makes a new one. ${ENDS} An ended connection answers \`{ok: true}\` again and changes nothing. ${NOT_FOUND} ${AUTH}`,
      tags: ['operators'],
      params: Cid,
      response: withErrors({ 200: Type.Object({ ok: Type.Literal(true) }) }, 401, 403, 404),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    await s.connections.disconnect(user.id, request.params.cid, request.ip);
    return { ok: true as const };
  });

  app.post('/api/connections/:cid/limit', {
    schema: {
      summary: 'Set how many agents an operator may have for you',
      description: `\`max_agents\` ${MAX_AGENTS_RANGE.min} to ${MAX_AGENTS_RANGE.max} (422 outside). Lower than the connection's live agents: the newest beyond it become \`suspended\` (refused like a revoked agent: no requests, no passes, cloud verify and the revocation list refuse their passes). Higher: suspended agents become \`active\` again, oldest first, up to it; passes minted before the suspension stay refused. Answers the connection as \`GET /api/connections\` lists it. 409 for an ended connection. ${NOT_FOUND} ${AUTH}`,
      tags: ['operators'],
      params: Cid,
      body: LimitIn,
      response: withErrors({ 200: OwnerConnectionOut }, 400, 401, 403, 404, 409),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    return ownerConnectionOut(await s.connections.setLimit(user.id, request.params.cid, request.body.max_agents, request.ip));
  });
}
