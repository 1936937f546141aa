import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { withErrors } from '../../schemas/common.ts';
import { agentBodyChecks } from '../../body-checks.ts';
import { RequestKind, RequestStatus, TxnParams, stepupAction } from '../../schemas/approvals.ts';
import { QUOTAS } from '../../../domain/quotas.ts';
import { REQUEST_KEEP_MS } from '../../../domain/housekeeping.ts';

// Deliberately loose: counts, lengths and characters of scopes, the site and user_info names are
// domain rules answered with 400 and a clear `detail`; only wrong JSON types are a 422 here. When
// the schema fails, the 422 lists the domain's shape problems too (bodyChecks: every problem at once).
const AgentReqIn = Type.Object({
  agent_id: Type.String({ maxLength: 200 }),
  site: Type.String({ maxLength: 1000, description: 'site id: the host name, lower-cased (optionally `:port`), 1 to 253 characters' }),
  scopes: Type.Array(Type.String({ maxLength: 1000 }), { maxItems: 100, description: '1 to 20 distinct scopes, each `[a-z0-9_:.-]`, at most 64 characters; duplicates collapse' }),
  user_info: Type.Optional(Type.Array(Type.String({ maxLength: 1000 }), { maxItems: 100, default: [], description: 'field names from GET /api/user-info/fields' })),
  agent_jwt: Type.String({ maxLength: 16384 }),
});

const CreatedOut = Type.Object({
  txn_id: Type.String({ description: 'request id (`t_`); poll it with GET /api/v1/authz-requests/{txn_id}' }),
  expires_in: Type.Integer({ description: 'seconds the owner has to answer: 300' }),
});

const PollOut = Type.Object({
  status: RequestStatus,
  kind: RequestKind,
  agent: Type.String({ description: "the agent's display name" }),
  site: Type.String(),
  scopes: Type.Array(Type.String()),
  user_info: Type.Array(Type.String()),
  action: Type.Optional(Type.String({ description: 'step-ups and agent approvals only' })),
  stepup_token: Type.Optional(Type.String({ description: 'approved step-up, collected with a valid X-Agent-JWT of the requesting agent: ES256 JWT, typ `stepup+jwt`, 60 s, single use' })),
  stepup_token_error: Type.Optional(Type.String({ description: 'why no step-up token is in this answer' })),
});

const PollHeaders = Type.Object({ 'x-agent-jwt': Type.Optional(Type.String({ description: 'an agent JWT of the requesting agent; needed to collect a step-up token' })) });

const CREATE_DESCRIPTION = `Asks the agent's owner for access to a site. The owner is notified and has 300 s to answer.

- **400** invalid scopes (0 or more than 20 after removing duplicates, longer than 64 characters, characters outside
  \`[a-z0-9_:.-]\` — upper case included), invalid \`site\` (not a lower-case host name with optional \`:port\`, or longer
  than 253 characters; upper case is lower-cased), or \`unknown user_info field\` (not in the registry; \`user:phone\` only
  when the owner has a verified phone).
- **401** invalid \`agent_jwt\`. **403** \`agent revoked by its owner\`.
- **422** a field missing or of the wrong type: the answer lists every problem of the body at once, an invalid
  \`site\` or \`scopes\` and an \`agent_id\` that is not an agent id (\`ag_...\`) included.
- **409** \`access already approved\` (a live grant with uses left exists for this agent and site) or a request for this
  site is already waiting (one pending access request per agent and site, decided by the database).
- **429** (with \`retry_after\` and the Retry-After header) more than 20 requests per agent and site in 300 s; or a quota
  of the owner (\`detail\` names it, \`quota\` too): more than ${QUOTAS.accessRequestsPerAgentPerHour} access requests per agent per hour across all sites
  (\`access_requests_per_hour\`); ${QUOTAS.openRequestsPerOwner} open requests of the owner already, of all kinds and all the owner's agents
  (\`open_requests\`; \`retry_after\` is when the oldest expires); a site where the owner has no live access while the
  owner has live access at ${QUOTAS.liveSitesPerOwner} sites (\`live_sites\`).`;

const POLL_DESCRIPTION = `Reads a request: \`status\` is \`pending\`, \`approved\`, \`denied\`, \`expired\` or \`consumed\`. A pending request
past its 300 s reads (and is stored as) \`expired\`. A request cancelled because its agent was removed or revoked reads
\`denied\`. An approved access request reads the \`scopes\` and \`user_info\` the owner granted (possibly narrower than asked).

Approved step-up: send \`X-Agent-JWT\` (an agent JWT of the agent that asked) to collect \`stepup_token\`. Delivery is
atomic: exactly one poll gets the token; that answer still reads \`approved\`, every later one reads \`consumed\` with
\`stepup_token_error\` \`step-up token already delivered\`. Without the header, or with an invalid or another agent's JWT,
the answer carries \`stepup_token_error\` with the reason instead and the request stays collectable. An approved step-up
not collected within 300 s of the approval reads \`expired\`.

- **404** unknown \`txn_id\`: never filed, or ended more than ${REQUEST_KEEP_MS / 86_400_000} days ago (answered, expired and collected
  requests are deleted a week past their expiry).`;

export async function authzRequestRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.post('/api/v1/authz-requests', {
    config: { bodyChecks: agentBodyChecks('agent_id', 'site', 'scopes') },
    schema: { summary: 'Ask the owner for access to a site', description: CREATE_DESCRIPTION, tags: ['agent'], body: AgentReqIn, response: withErrors({ 200: CreatedOut }, 400, 401, 403, 409, 429) },
  }, async (request) => {
    const b = request.body;
    const created = await s.approvals.requestAccess({ agentId: b.agent_id, agentJwt: b.agent_jwt, site: b.site, scopes: b.scopes, userInfo: b.user_info ?? [], ip: request.ip });
    return { txn_id: created.txnId, expires_in: created.expiresIn };
  });

  app.get('/api/v1/authz-requests/:txn_id', {
    schema: { summary: 'Poll an access or step-up request', description: POLL_DESCRIPTION, tags: ['agent'], params: TxnParams, headers: PollHeaders, response: withErrors({ 200: PollOut }, 404) },
  }, async (request) => {
    const header = request.headers['x-agent-jwt'];
    const agentJwt = Array.isArray(header) ? header[0] : header;
    const view = await s.approvals.poll(request.params.txn_id, agentJwt, request.ip);
    const r = view.request;
    return {
      status: r.status,
      kind: r.kind,
      agent: view.agentName,
      site: r.site,
      scopes: r.scopes,
      user_info: r.userInfo,
      ...stepupAction(r),
      ...(view.stepupToken !== undefined ? { stepup_token: view.stepupToken } : {}),
      ...(view.stepupTokenError !== undefined ? { stepup_token_error: view.stepupTokenError } : {}),
    };
  });
}
