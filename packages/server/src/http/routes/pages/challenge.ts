import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { PublicSite } from '@mandate/web';
import type { Services } from '../../../services.ts';
import { CHALLENGE_PATH, CLAIM_PATH, type ChallengeAnswer, type ChallengeRequest } from '../../../domain/challenge/challenge.ts';

const Refusal = Type.Object({
  error: Type.String({ description: 'the verdict code (401), `insufficient_scope` or `stepup_required` (403), or `invalid_request` (no pass)' }),
  error_description: Type.String(),
  detail: Type.String({ description: 'the same as `error_description`, as every error of the service carries' }),
  action: Type.Optional(Type.String({ description: 'with `stepup_required`: the action to have the owner approve (`claim`)' })),
}, { additionalProperties: true });

const ReadOk = Type.Object({
  ok: Type.Literal(true),
  site: Type.String(),
  agent_id: Type.String(),
  agent_name: Type.String(),
  scopes: Type.Array(Type.String()),
  message: Type.String(),
});

const ClaimOk = Type.Object({
  claimed: Type.Literal(true),
  site: Type.String(),
  agent_id: Type.String(),
  agent_name: Type.String(),
  message: Type.String(),
});

const header = (request: FastifyRequest, name: string): string | undefined => {
  const v = request.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

const agentRequest = (request: FastifyRequest): ChallengeRequest => ({
  authorization: header(request, 'authorization'),
  dpop: header(request, 'dpop'),
  stepup: header(request, 'x-service-stepup'),
  ip: request.ip,
});

const answer = (reply: FastifyReply, a: ChallengeAnswer): FastifyReply => reply.code(a.status).header('cache-control', 'no-store').send(a.body);

/**
 * The challenge (decisions §23): `/challenge` is a page for people and, with a pass, a protected
 * route for agents; `/challenge/claim` is its sensitive action. Verified by the service's own
 * verifier (domain/challenge). `/challenge/agents.txt` is a static public page (public.ts).
 */
export async function challengeRoutes(app: FastifyInstance, s: Services, site: PublicSite): Promise<void> {
  const { siteId, scope, action } = s.challenge.facts;
  const what = `Site id \`${siteId}\` (the host of BASE_URL), scope \`${scope}\``;
  app.get(CHALLENGE_PATH, {
    schema: {
      summary: 'The challenge: a protected demo route (read)',
      description: `A route this instance protects as a site would, so anyone can try an agent end to end. ${what}. With \`Authorization: Bearer <pass>\` and \`DPoP: <proof>\` (signed for \`<BASE_URL>/challenge\`), verified in cloud mode: 200 JSON; 401 \`{error}\` when the pass or proof does not verify; 403 \`insufficient_scope\` without the scope. Without an Authorization header: the HTML page explaining the steps (or 401 \`invalid_request\` when the request accepts JSON but not HTML). The steps for agents: \`/challenge/agents.txt\`.`,
      tags: ['site'],
      response: { 200: ReadOk, 401: Refusal, 403: Refusal },
    },
  }, async (request, reply) => {
    const accept = header(request, 'accept') ?? '';
    const wantsJson = /application\/json/.test(accept) && !/text\/html/.test(accept);
    if (request.headers.authorization === undefined && !wantsJson) {
      const page = site.challenge;
      return reply.code(page.status as 200).type(page.type).header('cache-control', page.cache).send(page.body);
    }
    return answer(reply, await s.challenge.read(agentRequest(request)));
  });

  app.post(CLAIM_PATH, {
    schema: {
      summary: 'The challenge: its sensitive action (claim)',
      description: `The challenge's step-up action \`${action}\`. ${what}. Needs the pass, a DPoP proof signed for \`<BASE_URL>/challenge/claim\` (method POST) and \`X-Service-Stepup: <token>\` approved for \`${action}\`: 200 JSON, the step-up token used up. Without the step-up: 403 \`{"error": "stepup_required", "action": "${action}"}\` (nothing used up); 401 and 403 \`insufficient_scope\` as for reading. Any body is ignored.`,
      tags: ['site'],
      response: { 200: ClaimOk, 401: Refusal, 403: Refusal },
    },
  }, async (request, reply) => answer(reply, await s.challenge.claim(agentRequest(request))));
}
