import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { withErrors } from '../../schemas/common.ts';
import { GrantOut, GrantParams, grantOut } from '../../schemas/approvals.ts';
import { agentNames } from '../../../domain/agents/agent-names.ts';
import { GRANTS_PAGE } from '../../../domain/grants/grants.ts';
import { QUOTAS } from '../../../domain/quotas.ts';
import { liveSignInsByGrant } from '../../../domain/oidc/owner-sign-ins.ts';

const GrantUserInfoIn = Type.Object({
  user_info: Type.Array(Type.String({ maxLength: 1000 }), { maxItems: 100, description: 'the fields to keep: a subset of the current ones; `[]` clears' }),
});

const GrantsQuery = Type.Object({
  offset: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0, description: 'grants to skip (newest first): the previous offset plus the previous page\'s length' }),
  limit: Type.Integer({ minimum: 1, maximum: GRANTS_PAGE.max, default: GRANTS_PAGE.default }),
});

export async function grantRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/api/grants', {
    schema: {
      summary: "The owner's live grants",
      description: `Active grants that have not expired, newest first (\`grants\` in GET /api/me is the first page). A grant whose uses are spent is still listed, with \`uses_left\` 0. Paged: at most \`limit\` (default and most ${GRANTS_PAGE.max}) from \`offset\`; a page shorter than \`limit\` is the last. An owner has live access at ${QUOTAS.liveSitesPerOwner} sites at most, so only many agents at the same sites make more than one page.`,
      tags: ['grants'],
      querystring: GrantsQuery,
      response: withErrors({ 200: Type.Array(GrantOut) }, 401),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    const [grants, names, signIns] = await Promise.all([s.grants.listLive(user.id, request.query), agentNames(s.store.agents, user.id), liveSignInsByGrant(s.store, user.id, s.clock.now())]);
    return grants.map((g) => grantOut(g, names, signIns));
  });

  app.post('/api/grants/:grant_id/revoke', {
    schema: {
      summary: 'Revoke a grant',
      description: 'The grant is revoked at a new `rev_seq` and appears in `revoked_grants` of GET /api/v1/revocation; cloud verification refuses its passes at once, no new pass, refresh or step-up is issued. **404** unknown grant or another owner\'s; **409** not active (already revoked, or replaced by a newer approval).',
      tags: ['grants'],
      params: GrantParams,
      response: withErrors({ 200: Type.Object({ ok: Type.Literal(true), rev_seq: Type.Integer() }) }, 401, 403, 404, 409),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    const { revSeq } = await s.grants.revoke(user.id, request.params.grant_id, request.ip);
    return { ok: true as const, rev_seq: revSeq };
  });

  app.patch('/api/grants/:grant_id/user-info', {
    schema: {
      summary: "Narrow or clear a grant's user-info fields",
      description: 'Only narrowing or clearing: adding a field is refused with **400** (it needs a fresh approval on the phone: the agent sends a new access request). Takes effect with the next pass; passes already issued keep their snapshot until they expire (at most 10 minutes). **400** also for an unknown field; **404** unknown grant or another owner\'s; **409** grant not active.',
      tags: ['grants'],
      params: GrantParams,
      body: GrantUserInfoIn,
      response: withErrors({ 200: GrantOut }, 400, 401, 403, 404, 409),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    const grant = await s.grants.narrowUserInfo(user.id, request.params.grant_id, request.body.user_info, request.ip);
    const [names, signIns] = await Promise.all([agentNames(s.store.agents, user.id), liveSignInsByGrant(s.store, user.id, s.clock.now())]);
    return grantOut(grant, names, signIns);
  });
}
