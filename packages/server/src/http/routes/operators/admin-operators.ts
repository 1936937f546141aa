import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { ADMIN_LIST_CAP } from '../../../domain/operators/operators.ts';
import { IdParam, withErrors } from '../../schemas/common.ts';
import { OperatorOut, operatorOut } from './operator-out.ts';

const AdminOperatorOut = Type.Composite([OperatorOut, Type.Object({ user_id: Type.String({ description: 'the person who registered it' }) })]);

const StatusIn = Type.Object({ enabled: Type.Boolean({ description: 'true: switch on (the domain must be verified); false: switch off' }) }, { additionalProperties: false });

const Switched = Type.Composite([
  AdminOperatorOut,
  Type.Object({
    changed: Type.Boolean({ description: 'false when the operator already was as asked' }),
    agents_blocked: Type.Integer({ description: 'agents this off blocked' }),
    agents_unblocked: Type.Integer({ description: 'agents this on unblocked' }),
  }),
]);

const ADMIN = '401 when not signed in, 403 for anyone but an admin (and for a cookie request from another origin).';

export async function adminOperatorRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/api/admin/operators', {
    schema: {
      summary: 'Every operator (admin only)',
      description: `Newest first, at most ${ADMIN_LIST_CAP}. ${ADMIN}`,
      tags: ['admin', 'operators'],
      response: withErrors({ 200: Type.Array(AdminOperatorOut) }, 401, 403),
    },
  }, async (request) => {
    await s.auth.admin(request);
    return (await s.operators.adminList()).map((v) => ({ ...operatorOut(v), user_id: v.operator.userId }));
  });

  app.post('/api/admin/operators/:oid/status', {
    schema: {
      summary: 'Switch an operator on or off (admin only)',
      description: 'Off (`{"enabled": false}`, from `pending` or `active`): the operator becomes `disabled` and every agent it created that is live becomes `blocked`: '
        + 'cloud verify answers `agent_revoked`, the revocation list lists it, agent status reads `revoked`, OIDC sign-ins and new passes are refused. Its grants are kept. '
        + 'On (`{"enabled": true}`, from `pending` or `disabled`; 409 until the domain is verified): the operator becomes `active` and exactly the agents an off blocked work again; '
        + 'passes minted before the off stay refused, new passes work at once. Asking for the state it already has changes nothing (`changed: false`). '
        + `404 for an unknown operator. ${ADMIN}`,
      tags: ['admin', 'operators'],
      params: IdParam('oid', 'op'),
      body: StatusIn,
      response: withErrors({ 200: Switched }, 401, 403, 404, 409),
    },
  }, async (request) => {
    await s.auth.admin(request);
    const { enabled } = request.body;
    const outcome = await s.operators.setEnabled(request.params.oid, enabled, request.ip);
    request.log.info({ operator: outcome.operator.id, enabled, changed: outcome.changed, agents: outcome.agentIds.length }, 'operator switched');
    return {
      ...operatorOut(s.operators.view(outcome.operator)),
      user_id: outcome.operator.userId,
      changed: outcome.changed,
      agents_blocked: enabled ? 0 : outcome.agentIds.length,
      agents_unblocked: enabled ? outcome.agentIds.length : 0,
    };
  });
}
