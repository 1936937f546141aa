import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { withErrors } from '../../schemas/common.ts';
import { agentBodyChecks } from '../../body-checks.ts';
import { AgentApprovalDetailsIn } from '../../schemas/agent-approval.ts';

// Loose lengths on purpose: the action pattern and the details are domain rules (400 with a clear
// detail), and texts longer than their size are cut, not refused (decisions §19).
const AgentApprovalIn = Type.Object({
  agent_id: Type.String({ maxLength: 200 }),
  agent_jwt: Type.String({ maxLength: 16384 }),
  site: Type.String({ maxLength: 1000, description: 'the host name of the site the agent acts on (at most 253 characters); it need not use the service' }),
  action: Type.String({ maxLength: 1000, description: '`[a-z0-9_:-]{1,64}`, for example `checkout:submit`' }),
  details: Type.Optional(AgentApprovalDetailsIn),
});

const CreatedOut = Type.Object({
  txn_id: Type.String({ description: 'request id (`t_`); poll it with GET /api/v1/authz-requests/{txn_id}' }),
  expires_in: Type.Integer({ description: 'seconds the owner has to answer: 300' }),
  status: Type.Union([Type.Literal('pending'), Type.Literal('approved')], { description: '`approved`: the owner\'s approval mode or plan approved it at once, with no card' }),
});

const DESCRIPTION = `Asks the owner to approve one action on a site that need not use the service (decisions §19): no site grant
is needed, and several requests may wait for one site at once. The owner sees a card with the action, the
details and their category (money, security, delete, publish, low, unknown) and approves with a passkey or
denies. Poll the answer with GET /api/v1/authz-requests/{txn_id}: \`pending\`, \`approved\`, \`denied\` or \`expired\`.

\`details\` (all optional): \`label\` (cut to 80 characters), \`amount\` (40), \`item\` (120), \`page\` (200), \`host\`,
\`target_host\` (host names), \`path\` (\`/\` + printable ASCII, at most 300), \`card_fields\`, \`password_fields\`
(booleans), \`text_digests\` (at most 8 SHA-256 digests, 64 lower-case hex digits each); \`summary\` and \`digest\`
together (decisions §29) bind the approval to exactly what it is for: the summary is shown on the card as written (1 to
500 printable characters, lines kept), the digest is base64url SHA-256 (43 characters) of the RFC 8785 (JCS) canonical
JSON of the details, and the owner's passkey challenge commits to it (a receipt keeps the proof).

- **400** invalid \`site\`, \`action\` or a detail (one of \`summary\` and \`digest\` without the other included). **401** invalid \`agent_jwt\`. **403** \`agent revoked by its owner\`.
- **422** a field missing or of the wrong type.
- **429** more than 30 agent approvals per agent in 60 s (counted apart from step-ups), or the owner already has
  50 open requests of all kinds (decisions §25).`;

export async function agentApprovalRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.post('/api/v1/agent-approval', {
    config: { bodyChecks: agentBodyChecks('agent_id', 'site') },
    schema: { summary: 'Ask the owner to approve one action on any site', description: DESCRIPTION, tags: ['agent'], body: AgentApprovalIn, response: withErrors({ 200: CreatedOut }, 400, 401, 403, 429) },
  }, async (request) => {
    const b = request.body;
    const created = await s.approvals.requestAgentApproval({ agentId: b.agent_id, agentJwt: b.agent_jwt, site: b.site, action: b.action, details: b.details, ip: request.ip });
    return { txn_id: created.txnId, expires_in: created.expiresIn, status: created.status };
  });
}
