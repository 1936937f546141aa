import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { withErrors } from '../../schemas/common.ts';
import { RequestStatus, TxnParams } from '../../schemas/approvals.ts';
import { BoundDetailsIn } from '../../schemas/agent-approval.ts';
import { bearerToken } from '../../bearer.ts';

// Loose on purpose: the action's length and characters are a domain rule (400 with a clear detail).
const SiteStepupIn = Type.Object({
  access_token: Type.String({ minLength: 1, maxLength: 16384, description: 'the pass the agent (or MCP client) presented to you' }),
  action: Type.String({ maxLength: 2000, description: '1 to 200 printable characters, shown to the owner as written' }),
  details: Type.Optional(BoundDetailsIn),
});

const CreatedOut = Type.Object({
  txn_id: Type.String({ description: 'request id (`t_`); poll it with GET /api/v1/stepup/site/{txn_id} and the same pass' }),
  expires_in: Type.Integer({ description: 'seconds the owner has to answer: 300' }),
});

const PollQuery = Type.Object({
  wait: Type.Optional(Type.String({ maxLength: 16, description: 'seconds to wait for the owner\'s answer, 0 to 25 (default 0: answer at once)' })),
});

const PollHeaders = Type.Object({
  authorization: Type.Optional(Type.String({ description: '`Bearer <pass>`: a live pass of the same agent, access and site as the one that filed the request' })),
});

const PollOut = Type.Object({
  status: RequestStatus,
  stepup_token: Type.Optional(Type.String({ description: 'with `approved`, to exactly one poll: the single-use step-up token (60 s); carries `details_digest` when details were given' })),
  stepup_token_error: Type.Optional(Type.String({ description: 'why an approved step-up gave no token (`consumed`: already delivered; the access was revoked meanwhile)' })),
});

const ACCESS = `Authenticated by the live pass itself, checked as cloud verify checks it (signature, expiry, revocation of its agent
and access, at once) but without a DPoP proof: you do not hold the agent's key. The pass's \`aud\` is the site that asks.`;

const POST_DESCRIPTION = `Asks the pass's owner to approve one sensitive action at your site (decisions §28), for clients that hold no
agent key (MCP clients, keyless tools): the owner's card says that your site asks, for that agent. ${ACCESS}
Its only effect is that card. Then wait for the answer with GET /api/v1/stepup/site/{txn_id}.

\`details\` (optional, decisions §29) binds the approval to exactly what it is for: \`summary\` is shown on the owner's card as
written, \`digest\` is base64url SHA-256 of the RFC 8785 (JCS) canonical JSON of the details (for example a tool call's
arguments). The passkey challenge commits to the digest, and the step-up token carries it as \`details_digest\`.

- **400** invalid \`action\` (empty, only spaces, over 200 characters, control or invisible characters) or \`details\`
  (the detail names the field).
- **401** the pass does not verify or has expired. **403** its agent was revoked (\`agent revoked by its owner\`) or its
  access revoked or ended.
- **422** a field missing or of the wrong type.
- **429** more than 10 step-up requests for the pass's agent in 60 s (agent-filed and site-filed together), or the owner
  already has 50 open requests of all kinds (decisions §25; \`retry_after\`).`;

const POLL_DESCRIPTION = `The owner's answer to a site step-up: a long poll that waits up to \`wait\` seconds (0 to 25) while the request is
pending, and answers as soon as the owner answers, whichever node they answer on. \`status\`: \`pending\` (still
waiting: poll again), \`approved\` with \`stepup_token\` (to exactly one poll, however many run at once), \`consumed\` (the token
was already delivered), \`denied\`, \`expired\` (not answered in 5 minutes, or the approval not collected within 5 minutes).

Send \`Authorization: Bearer <pass>\`: the pass that filed the request, or any live pass of the same agent, access (grant)
and site, such as the one the agent refreshed meanwhile. Use the token as the agent would: \`POST /api/v1/stepup/verify\`
with \`site\`, \`action\` and \`details_digest\` (or \`stepup_token\` in cloud verify).

- **400** \`txn_id\` is not a request id; \`wait\` not a whole number from 0 to 25.
- **401** no pass, or one that does not verify or has expired. **403** the pass's agent or access was revoked.
- **404** unknown \`txn_id\`, a request the agent filed itself, or one filed with a pass of another agent, access or site
  (no answer tells these apart).`;

export async function siteStepupRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.post('/api/v1/stepup/site', {
    schema: { summary: 'A site asks the owner to approve one action (keyless clients)', description: POST_DESCRIPTION, tags: ['site'], body: SiteStepupIn, response: withErrors({ 200: CreatedOut }, 400, 401, 403, 429) },
  }, async (request) => {
    const b = request.body;
    const created = await s.approvals.requestSiteStepup({ accessToken: b.access_token, action: b.action, details: b.details, ip: request.ip });
    return { txn_id: created.txnId, expires_in: created.expiresIn };
  });

  app.get('/api/v1/stepup/site/:txn_id', {
    schema: { summary: 'Wait for the owner\'s answer to a site step-up', description: POLL_DESCRIPTION, tags: ['site'], params: TxnParams, querystring: PollQuery, headers: PollHeaders, response: withErrors({ 200: PollOut }, 400, 401, 403, 404) },
  }, async (request, reply) => {
    // The wait ends when the site hangs up: no token is collected for nobody.
    const hangUp = new AbortController();
    reply.raw.once('close', () => hangUp.abort());
    const view = await s.approvals.pollSiteStepup({ txnId: request.params.txn_id, accessToken: bearerToken(request), wait: request.query.wait, ip: request.ip, signal: hangUp.signal });
    return {
      status: view.request.status,
      ...(view.stepupToken !== undefined ? { stepup_token: view.stepupToken } : {}),
      ...(view.stepupTokenError !== undefined ? { stepup_token_error: view.stepupTokenError } : {}),
    };
  });
}
