import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { withErrors } from '../../schemas/common.ts';
import { agentBodyChecks } from '../../body-checks.ts';
import { BoundDetailsIn } from '../../schemas/agent-approval.ts';

// Loose on purpose: the action's length and characters are a domain rule (400 with a clear detail).
const StepupIn = Type.Object({
  agent_id: Type.String({ maxLength: 200 }),
  site: Type.String({ maxLength: 1000, description: 'the site id of the grant' }),
  action: Type.String({ maxLength: 2000, description: '1 to 200 printable characters, shown to the owner as written' }),
  agent_jwt: Type.String({ maxLength: 16384 }),
  details: Type.Optional(BoundDetailsIn),
});

const CreatedOut = Type.Object({
  txn_id: Type.String({ description: 'request id (`t_`); poll it with GET /api/v1/authz-requests/{txn_id} and header X-Agent-JWT' }),
  expires_in: Type.Integer({ description: 'seconds the owner has to answer: 300' }),
});

const DESCRIPTION = `Asks the owner to approve one sensitive action at a site. Once approved, the agent collects a single-use step-up
token (60 s) by polling GET /api/v1/authz-requests/{txn_id} with \`X-Agent-JWT\`, and sends it to the site in
\`X-Service-Stepup\`.

\`details\` (optional, decisions §29) binds the approval to exactly what it is for: \`summary\` is shown on the owner's
card as written, \`digest\` is base64url SHA-256 of the RFC 8785 (JCS) canonical JSON of the details (for example the
request body). The passkey challenge commits to the digest, and the step-up token carries it as \`details_digest\`, so a
site that sends \`details_digest\` to verification refuses a token approved for other details.

- **400** invalid \`action\` (empty, only spaces, longer than 200 characters, control or invisible characters) or \`site\`;
  invalid \`details\` (a \`summary\` empty or over 500 characters or with control or invisible characters other than line
  feeds, a \`digest\` that is not 43 base64url characters, another field): the detail names the field.
- **401** invalid \`agent_jwt\`. **403** \`agent revoked by its owner\`.
- **422** a field missing or of the wrong type: the answer lists every problem of the body at once, an invalid
  \`site\` or \`action\` and an \`agent_id\` that is not an agent id included.
- **403** \`no approved access to this site\`: the agent holds no active, unexpired grant there (a grant whose uses are
  all spent still counts: its last pass may be live).
- **429** more than 10 step-up requests per agent in 60 s, or the owner already has 50 open requests of all kinds
  (decisions §25; \`retry_after\`: when the oldest open one expires).`;

export async function stepupRequestRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.post('/api/v1/stepup', {
    config: { bodyChecks: agentBodyChecks('agent_id', 'site', 'action') },
    schema: { summary: 'Ask the owner to approve one sensitive action', description: DESCRIPTION, tags: ['agent'], body: StepupIn, response: withErrors({ 200: CreatedOut }, 400, 401, 403, 429) },
  }, async (request) => {
    const b = request.body;
    const created = await s.approvals.requestStepup({ agentId: b.agent_id, agentJwt: b.agent_jwt, site: b.site, action: b.action, details: b.details, ip: request.ip });
    return { txn_id: created.txnId, expires_in: created.expiresIn };
  });
}
