import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { withErrors } from '../../schemas/common.ts';
import { RequestStatus, TxnParams } from '../../schemas/approvals.ts';
import { QUOTAS } from '../../../domain/quotas.ts';

const OptionsOut = Type.Object({
  options: Type.Object({}, { additionalProperties: true, description: 'pass as `optionsJSON` to @simplewebauthn/browser `startAuthentication()`; its challenge is single-use, 5 minutes, bound to this owner and this request' }),
});

// Ranges of `limits` are domain rules (400 with a clear detail); only wrong types are a 422 here.
export const ApproveLimitsIn = Type.Object({
  expires_in: Type.Optional(Type.Integer({ description: 'seconds from the approval, 60 to 31536000; becomes the grant expiry (`grant_expires_at`)' })),
  max_uses: Type.Optional(Type.Integer({ maximum: 2147483647, description: 'at least 1: how many passes the grant may issue (`grant_uses_left`)' })),
});

const TxAckIn = Type.Object({
  approve: Type.Boolean(),
  assertion: Type.Optional(Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], { description: 'what `startAuthentication()` returned for the assertion options of this request; required to approve' })),
  scopes: Type.Optional(Type.Array(Type.String({ maxLength: 1000 }), { maxItems: 100, description: 'a non-empty subset of the requested scopes (narrowing); default: all requested' })),
  user_info: Type.Optional(Type.Array(Type.String({ maxLength: 1000 }), { maxItems: 100, description: 'a subset of the requested user_info fields (narrowing or clearing); default: all requested' })),
  limits: Type.Optional(Type.Union([ApproveLimitsIn, Type.Null()])),
  steps: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 100, description: 'a plan card: the step ids pre-approved (default: all); money and security steps are never pre-approved' })),
});

const RESPONSE_DESCRIPTION = `The owner answers a request. The first answer from any device wins (compare-and-set on the
request's status); the owner's other devices are then told to dismiss the card.

- \`approve: false\` needs only the session. \`approve: true\` needs \`assertion\`, made over the challenge of
  GET /api/txn/{txn_id}/assertion-options with one of the owner's passkeys: without it, or with an invalid one,
  **401**.
- Approving an access request (\`initial\`) creates a grant with the approved \`scopes\` and \`user_info\` (each may
  only narrow the request: **400** on widening, on an empty scope list and on an unknown field) and the optional
  \`limits\` (**400** when \`expires_in\` is outside 60..31536000 or \`max_uses\` below 1). It replaces any earlier grant
  of the agent at that site; replacing a revoked one takes it off the revocation list (\`rev_seq\` advances). For a
  step-up, \`scopes\`, \`user_info\` and \`limits\` are ignored: the one action is approved as asked. For a plan
  card (kind \`plan\`), \`steps\` names the steps pre-approved (absent = all; **400** on an id not in the plan); money
  and security steps are never pre-approved.
- **404** unknown request or another owner's. **409** not pending (already answered, expired, or cancelled) or
  another device answered first; **409** also (with \`quota: "live_sites"\`) when approving access would give the owner
  live access at more than ${QUOTAS.liveSitesPerOwner} sites: revoke access at a site no longer used, then approve. The
  request stays pending meanwhile.`;

export async function approvalRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/api/txn/:txn_id/assertion-options', {
    schema: {
      summary: 'Passkey options to approve a request',
      description: `A WebAuthn challenge bound to the signed-in owner and this request. **404** unknown request or another owner's; **409** when the request is not pending (answered, expired, cancelled), the owner has no passkey yet, or (\`quota: "live_sites"\`) approving this access request would give the owner live access at more than ${QUOTAS.liveSitesPerOwner} sites: told before the passkey is asked for.`,
      tags: ['approvals'],
      params: TxnParams,
      response: withErrors({ 200: OptionsOut }, 401, 404, 409),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    return { options: (await s.approvals.assertionOptions(user.id, request.params.txn_id)) as Record<string, unknown> };
  });

  app.post('/api/txn/:txn_id/response', {
    schema: {
      summary: "The owner's answer to a request",
      description: RESPONSE_DESCRIPTION,
      tags: ['approvals'],
      params: TxnParams,
      body: TxAckIn,
      response: withErrors({ 200: Type.Object({ status: RequestStatus }) }, 400, 401, 403, 404, 409),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    const b = request.body;
    const limits = b.limits ?? undefined;
    return s.approvals.decide(user.id, request.params.txn_id, {
      approve: b.approve,
      assertion: b.assertion ?? undefined,
      scopes: b.scopes,
      userInfo: b.user_info,
      limits: limits && { expiresIn: limits.expires_in, maxUses: limits.max_uses },
      steps: b.steps,
    }, request.ip);
  });
}
