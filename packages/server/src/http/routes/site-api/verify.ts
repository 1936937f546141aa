import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { Services } from '../../../services.ts';
import { DETAILS_DIGEST_DESCRIPTION, DETAILS_DIGEST_PATTERN, ERROR_TABLE, postVerifyEndpoint } from './verify-answers.ts';

const VerifyIn = Type.Object({
  access_token: Type.String({ minLength: 1, maxLength: 16384, description: 'the pass from `Authorization: Bearer` (or `DPoP`)' }),
  dpop: Type.Optional(Type.String({ minLength: 1, maxLength: 16384, description: 'the `DPoP` header of the request; required for an agent\'s pass, and for a resource pass bound to a DPoP key' })),
  method: Type.String({ minLength: 1, maxLength: 16, description: 'HTTP method of the request' }),
  url: Type.String({ minLength: 1, maxLength: 8192, description: 'full URL the agent requested (query is ignored)' }),
  stepup_token: Type.Optional(Type.String({ minLength: 1, maxLength: 16384, description: 'the `X-Service-Stepup` header, for sensitive actions' })),
  site: Type.Optional(Type.String({ minLength: 1, maxLength: 253, description: 'site id; when given, the pass must be for it and `url` may be any address (e.g. behind a proxy)' })),
  action: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'with `stepup_token`: the action the step-up must have been approved for' })),
  details_digest: Type.Optional(Type.String({ pattern: DETAILS_DIGEST_PATTERN, description: DETAILS_DIGEST_DESCRIPTION })),
  resource: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'a protected resource (decisions §28, e.g. an MCP server): its URL exactly as in its metadata; the pass must then be an app\'s resource pass for exactly this URL (never an agent\'s pass)' })),
  token_type: Type.Optional(Type.Union([Type.Literal('Bearer'), Type.Literal('DPoP')], { description: 'with `resource`: the scheme of the `Authorization` header the pass came with; absent: `DPoP` when `dpop` is sent, else `Bearer`' })),
});

const VerifyOk = Type.Object({
  valid: Type.Literal(true),
  agent_id: Type.String(),
  agent_name: Type.String(),
  user_id: Type.String({ description: "the person's stable id, the same at every site" }),
  site: Type.String(),
  scopes: Type.Array(Type.String()),
  user_info: Type.Record(Type.String(), Type.String(), { description: 'approved fields (`user:name`, `user:email`, `user:phone`) -> value; `{}` when none' }),
  stepup: Type.Boolean({ description: 'true when a valid step-up token accompanied the request and was used up by this call' }),
  client_id: Type.Optional(Type.String({ description: 'with `resource`: the OAuth client the pass was issued to' })),
  resource: Type.Optional(Type.String({ description: 'with `resource`: the resource URL (the pass\'s `aud`); `site` is then its host' })),
  scope: Type.Optional(Type.String({ description: 'with `resource`: the pass\'s scopes, space-separated (as OAuth writes them)' })),
});

const DESCRIPTION = `Cloud-mode verification of one agent request: the pass, its DPoP proof (method, URL, key, 120 s
\`iat\` window, one-time \`jti\` across all nodes), revocation (effective at once), and, with \`stepup_token\`, the
one-time step-up (used up by a successful call; a step-up token that is sent but not usable fails the whole call).

Audience: with \`site\`, the pass's \`aud\` must equal it; without, it must equal the host of \`url\`.

**Protected resources** (decisions §28: an MCP server whose clients got passes from \`/oidc/token\`): send \`resource\`, the
resource's URL exactly. The pass must then be a resource pass whose \`aud\` is exactly that URL (\`wrong_site\` otherwise;
an agent's pass is never one, and without \`resource\` a resource pass is refused as before). A pass bound to a DPoP key
(\`cnf\`) must come with the \`DPoP\` scheme and its proof in \`dpop\` (signed by that key, for \`method\` and \`url\`, with
\`ath\`); a pass without \`cnf\` with the \`Bearer\` scheme (\`token_type\`, or no \`dpop\`); otherwise \`invalid_token\`.
Revocation of the app (its agent) and of its grant applies at once, as for agents. The answer adds \`client_id\`,
\`resource\` and \`scope\` (space-separated); \`site\` is the resource's host and \`user_info\` is \`{}\`. A \`stepup_token\`
from a site step-up filed with the app's pass (POST /api/v1/stepup/site) is checked against that pass and used up.

**Always HTTP 200**, also for a malformed body: failure is \`{valid: false, error, error_description}\`. A failed
call uses up nothing, with two exceptions, where the DPoP proof is spent: a pass refused as revoked (\`agent_revoked\`,
\`grant_revoked\`: revocation and the jti are one store round trip; the proof is bound to that pass), and a step-up
token that turns out to be already used.

${ERROR_TABLE}`;

export async function verifyRoutes(app: FastifyInstance, s: Services): Promise<void> {
  postVerifyEndpoint(app, { url: '/api/v1/verify', summary: 'Verify a pass and DPoP proof (cloud mode)', description: DESCRIPTION, body: VerifyIn, ok: VerifyOk }, async (b, ip) => {
    const answer = await s.verifier.verify({
      accessToken: b.access_token,
      dpop: b.dpop,
      tokenType: b.token_type,
      resource: b.resource,
      method: b.method,
      url: b.url,
      stepupToken: b.stepup_token,
      site: b.site,
      action: b.action,
      detailsDigest: b.details_digest,
      ip,
    });
    s.metrics.verified('cloud', answer.valid ? 'ok' : answer.error);
    // A step-up token that is sent but not usable fails the whole call: a valid answer used it up.
    if (answer.valid && b.stepup_token !== undefined) s.metrics.stepupConsumed();
    return answer;
  });
}
