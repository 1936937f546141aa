import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { Services } from '../../../services.ts';
import { DETAILS_DIGEST_DESCRIPTION, DETAILS_DIGEST_PATTERN, ERROR_TABLE, postVerifyEndpoint } from './verify-answers.ts';

const StepupVerifyIn = Type.Object({
  stepup_token: Type.String({ minLength: 1, maxLength: 16384, description: 'the `X-Service-Stepup` header' }),
  site: Type.String({ minLength: 1, maxLength: 2048, description: 'your site id; a protected resource (decisions §28) sends its resource URL exactly (a site step-up filed with an app\'s resource pass is for that URL)' }),
  action: Type.String({ minLength: 1, maxLength: 200, description: 'the sensitive action being performed' }),
  agent_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'the `sub` of the pass you verified; when given, a token of another agent is `stepup_invalid` (and not used up)' })),
  user_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'the owner (`user`) of the pass you verified; when given, a token approved by another user is `stepup_invalid` (and not used up)' })),
  details_digest: Type.Optional(Type.String({ pattern: DETAILS_DIGEST_PATTERN, description: DETAILS_DIGEST_DESCRIPTION })),
});

const StepupVerifyOk = Type.Object({
  valid: Type.Literal(true),
  agent_id: Type.String(),
  user_id: Type.String(),
  site: Type.String(),
  actions: Type.Array(Type.String(), { description: 'the approved action(s)' }),
});

const DESCRIPTION = `Local mode: sites that verify passes themselves still confirm each step-up token here, because
single use must hold across all nodes. A successful call uses the token up; a second call answers
\`stepup_used_or_expired\`. Also refused: \`stepup_wrong_site\`, \`stepup_wrong_action\`, \`stepup_wrong_details\`, \`stepup_invalid\`,
\`agent_revoked\` (agent removed or revoked), \`grant_revoked\` (the access for the site was revoked), \`invalid_request\`.
Send the \`agent_id\` and \`user_id\` of the pass you verified: a token issued to another agent or approved by
another user is then refused with \`stepup_invalid\` before it is used up. (Without them, check that the answer's
\`agent_id\` is the agent of the pass.)

**Always HTTP 200**, also for a malformed body.

${ERROR_TABLE}`;

export async function stepupVerifyRoutes(app: FastifyInstance, s: Services): Promise<void> {
  postVerifyEndpoint(app, { url: '/api/v1/stepup/verify', summary: 'Use up a step-up token (local mode)', description: DESCRIPTION, body: StepupVerifyIn, ok: StepupVerifyOk }, async (b, ip) => {
    const answer = await s.localStepup.verify({ stepupToken: b.stepup_token, site: b.site, action: b.action, agentId: b.agent_id, userId: b.user_id, detailsDigest: b.details_digest, ip });
    s.metrics.verified('stepup', answer.valid ? 'ok' : answer.error);
    if (answer.valid) s.metrics.stepupConsumed();
    return answer;
  });
}
